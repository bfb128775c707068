"""`python -m bench --quick` still runs: every figure builds its repositories, measures
and produces table rows. A smoke test only — it asserts nothing about speed (figures are
measured by hand; see bench/RESULTS.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import PACKAGE_ROOT


def test_quick_benchmark_runs_and_produces_rows(tmp_path: Path) -> None:
    from bench.__main__ import FIGURES

    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(out)],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| machine |" in proc.stdout
    document = json.loads(out.read_text())
    assert set(document["figures"]) == set(FIGURES)
    for name, figure in document["figures"].items():
        rows = [row for table in figure["tables"] for row in table["rows"]]
        assert rows, f"figure {name} produced no rows"
        assert all(len(row) == len(table["columns"]) for table in figure["tables"] for row in table["rows"])
        assert f"## {figure['title']}" in proc.stdout
