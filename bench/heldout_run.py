"""`python -m bench.heldout_run WEIGHTS.json GITDREAM-ARGS…`: gitdream with other salience weights.

The quality benchmark's held-out figure (`bench/quality.py`) dreams an agent with weights
fitted on the *other* agents' labels (`bench.fit_salience.fit`), to show that the in-sample
figure is not memorised. Those weights are not a setting of gitdream (its weights are the
constants of `gitdream/dream/salience_weights.py`), so this wrapper replaces them in this
process only — `WEIGHTS.json` holds `{"weights": {feature: log-odds}, "bias": log-odds}` —
and then runs gitdream's own command line with the remaining arguments. Bench only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    """Load the weights file `argv[0]`, install it, run `gitdream argv[1:]` (exits)."""
    from gitdream.dream import salience

    loaded = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    salience.WEIGHTS.clear()
    salience.WEIGHTS.update({str(k): float(v) for k, v in loaded["weights"].items()})
    salience.BIAS = float(loaded["bias"])

    from gitdream.cli import main as gitdream_main

    sys.argv = ["gitdream", *argv[1:]]
    gitdream_main()


if __name__ == "__main__":
    main(sys.argv[1:])
