"""`python -m bench [--quick] [--only NAME[,NAME]] [--repeats N] [--compare DIR] [--json FILE]`:
run the benchmarks and print Markdown for bench/RESULTS.md (machine facts, then one section per
figure). Run it from the repository root: it measures the gitdream of this checkout (this
process imports it from here, and child processes get it first on PYTHONPATH).

`--quick` is a smoke run (tiny sizes, one or two repeats): it checks that every figure
still runs, and its numbers mean nothing. `tests/test_bench_smoke.py` runs it.

`--compare DIR` measures the gitdream of another checkout DIR as well (e.g. `git worktree
add /tmp/before d9ac1c2`), interleaved with this one's in the same rounds, for the
figures that support it (`idle_path`): before and after under the same load.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

FIGURES = (
    "hook_idle",
    "idle_path",
    "offline_scale",
    "offline_engine",
    "commit_scale",
    "agent_scale",
    "anthropic_fake",
    "anthropic_backlog",
    "quality",
    "probe",
)


def _figure(name: str, settings: Any) -> Any:
    """Run one figure in a workspace of its own; print its Markdown; return it."""
    from bench import harness

    module = importlib.import_module(f"bench.{name}")
    with harness.workspace() as tmp:
        env = harness.make_env(tmp / "home")
        before = harness.load()
        start = time.perf_counter()
        figure = module.run(settings, tmp, env)
        figure.seconds = time.perf_counter() - start
        figure.load_before, figure.load_after = before, harness.load()
    print(figure.markdown())
    print()
    sys.stdout.flush()
    return figure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, 1-2 repeats")
    parser.add_argument("--only", metavar="NAME", help="comma-separated figures: " + ", ".join(FIGURES))
    parser.add_argument("--repeats", type=int, help="override every figure's repeat count")
    parser.add_argument(
        "--compare",
        metavar="DIR",
        type=Path,
        help="also measure the gitdream of checkout DIR, interleaved (idle_path: before/after)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write raw samples and rows as JSON")
    args = parser.parse_args(argv)

    import gitdream
    from bench import harness

    if Path(gitdream.__file__).resolve().parent.parent != ROOT:
        parser.error(f"imported gitdream from {gitdream.__file__}, not from this checkout {ROOT}")
    names = FIGURES if not args.only else tuple(n.strip() for n in args.only.split(",") if n.strip())
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    if args.compare is not None and not (args.compare / "gitdream" / "__init__.py").is_file():
        parser.error(f"--compare {args.compare}: not a gitdream checkout (no gitdream/__init__.py)")
    compare = args.compare.resolve() if args.compare is not None else None
    settings = harness.Settings(quick=args.quick, repeats=args.repeats, compare=compare)

    facts = harness.machine()
    busy = harness.busy_processes(0.1 if args.quick else 1.0)
    shown = list(argv if argv is not None else sys.argv[1:])
    if "--json" in shown:  # where the samples went is no part of what was measured
        at = shown.index("--json")
        del shown[at : at + 2]
    command = " ".join(["python -m bench", *(a for a in shown if not a.startswith("--json="))])
    print(f"# Benchmark run ({'quick smoke run, numbers meaningless' if args.quick else 'full'})")
    print()
    print(f"Command: `{command}` from the repository root.")
    print()
    print("| machine | |")
    print("|---|---|")
    for key, value in facts.items():
        print(f"| {key} | {value} |")
    print(f"| busy at start | {', '.join(busy) or 'nothing else above 10 % CPU'} |")
    print()
    sys.stdout.flush()

    results = []
    for name in names:
        results.append(_figure(name, settings))

    if args.json:
        document = {
            "machine": facts,
            "quick": args.quick,
            "figures": {
                f.name: {
                    "title": f.title,
                    "tables": [
                        {
                            "caption": t.caption,
                            "columns": t.columns,
                            "rows": [r if isinstance(r, list) else r.cells() for r in t.rows],
                        }
                        for t in f.tables
                    ],
                    "samples": f.samples,
                    "load": [f.load_before, f.load_after],
                    "seconds": f.seconds,
                }
                for f in results
            },
        }
        Path(args.json).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
