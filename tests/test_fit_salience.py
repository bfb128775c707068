"""The salience weights come from a reproducible fit (issue #14): `bench/fit_salience.py`
fits them to the hand-made labels, and the constants in gitdream/dream/salience_weights.py
are exactly what it gives. No precision figure is asserted here: the fit reports its
training and held-out figures, bench/RESULTS.md records them."""

from __future__ import annotations

import pytest

from bench import fit_salience
from gitdream.dream import salience
from tests.helpers import SHARED


def _example(n: int, label: int, features: dict[str, float]) -> fit_salience.Example:
    return fit_salience.Example(f"x.md#L{n}-L{n}", "kit" if n % 2 else "rest", label, features)


def test_a_feature_the_labels_contradict_moves_off_its_prior_only_when_the_pull_is_loose() -> None:
    data = [_example(n, int(n % 10 < 6), {"rule": 1.0}) for n in range(100)]  # 60 % keep
    data += [_example(200 + n, int(n % 20 == 0), {"status": 1.0}) for n in range(200)]  # 5 %
    data += [_example(500 + n, int(n % 50 == 0), {"path": 1.0}) for n in range(100)]  # 2 %: against its prior
    loose, _ = fit_salience.fit(data, l2=0.01)
    tight, _ = fit_salience.fit(data, l2=1e6)
    assert salience.PRIOR["path"] > 0 and loose["path"] < 0 < tight["path"]
    scale = tight["rule"] / salience.PRIOR["rule"]
    assert all(tight[n] == pytest.approx(scale * p, abs=1e-3) for n, p in salience.PRIOR.items())
    assert loose["tagged"] == pytest.approx(tight["tagged"], abs=1e-3)  # the labels never show a tag


def test_the_fit_is_deterministic() -> None:
    data = [
        _example(n, int(n % 7 == 0), {"rule": float(n % 3 == 0), "status": float(n % 5 == 0)})
        for n in range(300)
    ]
    assert fit_salience.fit(data, 4.0) == fit_salience.fit(data, 4.0)


@pytest.mark.skipif(
    fit_salience.shared_dir() is None,
    reason=f"the optional real data and labels are absent ({SHARED}/tools/make-real-repo, {SHARED}/quality)",
)
def test_the_weights_module_is_what_the_fit_gives_on_the_labels() -> None:
    data = fit_salience.examples(fit_salience.shared_dir())
    fitted = fit_salience.cross_source(data)
    assert fit_salience.module_text(fitted, len(data)) == fit_salience.WEIGHTS_MODULE.read_text(
        encoding="utf-8"
    ), "run `python -m bench.fit_salience --write`"
