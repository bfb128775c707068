"""Fit the offline engine's salience weights to hand-labelled real entries, reproducibly.

    python -m bench.fit_salience            # fit, report, print the weights module
    python -m bench.fit_salience --write    # ... and write gitdream/dream/salience_weights.py
    python -m bench.fit_salience --check    # exit 1 when that module is not what the fit gives

The procedure (`gitdream.dream.salience` explains the model):

1. `../shared/tools/make-real-repo` builds the real agent repository; every entry that
   `../shared/quality/labels.jsonl` labels is read the way a dream reads it (gitdream's
   readers, then the gather phase's noise filter — what it drops never reaches an engine —
   then the offline engine's clean-up) and turned into its features
   (`salience.features`, default cues). `keep` is 1, `transient` and `noise` are 0.
2. **Logistic regression pulled towards the prior**: the weights minimise the log-loss of
   the labels plus `l2 × Σ (w − prior)²`, so a feature the labels barely show keeps the
   prior `salience.FEATURES` gives it (the configured keep and skip cues, which the labels
   never show, keep theirs exactly). Newton's method from the prior: the optimum, whatever
   the starting point or the machine, rounded to 2 decimals.
3. **Validation across sources**: the agents of the labels are split into two groups (Kit's
   daily logs; BookMinder's diary and the Claude Code transcripts); the same procedure is
   fitted on one group and scored on the other, both ways. `l2` is the value of `L2_GRID`
   with the best held-out log-loss summed over the two directions, and the threshold the
   probability of `THRESHOLD_GRID` with the best held-out F1 pooled over both directions
   (precision and recall of `keep` entries); both are then used to fit all the labels.
   The report prints training and held-out precision and recall for each direction.

No weight names an entry or an agent; the only words are the lexicons'
(`gitdream.dream.lexicons`), which hold general words of eight languages.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

from gitdream.dream import noise, readers, salience  # noqa: E402
from gitdream.dream.dates import absolutize  # noqa: E402
from gitdream.engines.offline import clean_text  # noqa: E402
from gitdream.units import parse_entry_id  # noqa: E402

WEIGHTS_MODULE = ROOT / "gitdream" / "dream" / "salience_weights.py"
L2_GRID = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0)
THRESHOLD_GRID = tuple(round(0.2 + 0.025 * i, 3) for i in range(13))  # 0.2 … 0.5
NEWTON_STEPS = 30
GROUPS = {"kit": "Kit's daily logs", "rest": "BookMinder's diary and the Claude Code transcripts"}


@dataclass
class Example:
    """One labelled entry: its id, agent group, label (1 keep, 0 not) and features."""

    id: str
    group: str
    label: int
    features: dict[str, float]


def shared_dir() -> Path | None:
    for candidate in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if (candidate / "tools" / "make-real-repo").is_file() and (candidate / "quality").is_dir():
            return candidate
    return None


def examples(shared: Path, repo: Path | None = None) -> list[Example]:
    """Every labelled entry that reaches the engine, as an Example (step 1)."""
    labels: dict[str, str] = {}
    for line in (shared / "quality" / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            labels[row["id"]] = row["label"]
    with tempfile.TemporaryDirectory() as tmp:
        if repo is None:
            repo = Path(tmp) / "real"
            subprocess.run(
                [sys.executable, str(shared / "tools" / "make-real-repo"), str(repo)],
                check=True,
                capture_output=True,
            )
        paths = sorted({parsed[0] for parsed in map(parse_entry_id, labels) if parsed})
        cues = salience.Cues()
        out: list[Example] = []
        for path in paths:
            kind = "transcript" if path.endswith(".jsonl") else "log"
            read = readers.read_source(
                path, (repo / path).read_bytes(), kind=kind, fallback_date=None, max_file_bytes=1 << 30
            )
            kept, _ = noise.filter_noise(read.entries)
            for entry in kept:
                label = labels.get(entry.id)
                text = clean_text(entry, absolutize)
                if label is None or not text:
                    continue
                group = "kit" if path.startswith("agents/kit/") else "rest"
                out.append(
                    Example(entry.id, group, int(label == "keep"), salience.features(entry, text, cues))
                )
    return out


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix·x = vector (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    a = [[*row, vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col] / a[col][col]
                for c in range(col, n + 1):
                    a[r][c] -= factor * a[col][c]
    return [a[i][n] / a[i][i] for i in range(n)]


def _newton(
    rows: list[tuple[list[tuple[int, float]], int]], start: list[float], pull: list[float], l2: float
) -> list[float]:
    """Parameters minimising log-loss + l2 × Σ(w − pull)² over all but the last (the bias)."""
    size = len(start)
    w = start[:]
    for _ in range(NEWTON_STEPS):
        grad = [l2 * 2 * (w[j] - pull[j]) for j in range(size - 1)] + [0.0]
        hess = [[0.0] * size for _ in range(size)]
        for j in range(size - 1):
            hess[j][j] = 2 * l2
        for x, y in rows:
            full = [*x, (size - 1, 1.0)]
            p = salience.probability(sum(w[j] * v for j, v in full))
            for j, v in full:
                grad[j] += (p - y) * v
                for k, u in full:
                    hess[j][k] += p * (1 - p) * v * u
        for j in range(size):
            hess[j][j] += 1e-6
        step = _solve(hess, grad)
        w = [wj - sj for wj, sj in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return w


def fit(data: list[Example], l2: float) -> tuple[dict[str, float], float]:
    """(weights, bias) of step 2: first one scale of the whole prior and the bias (the
    prior's shape, calibrated), then each weight, pulled towards its scaled prior by
    l2 × Σ(w − scale × prior)²; the bias is not pulled."""
    names = list(salience.FEATURES)
    index = {n: i for i, n in enumerate(names)}
    prior = [salience.PRIOR[n] for n in names]
    rows = [([(index[k], v) for k, v in ex.features.items() if k in index], ex.label) for ex in data]
    summed = [([(0, sum(prior[j] * v for j, v in x))], y) for x, y in rows]
    scale, bias = _newton(summed, [1.0, salience.PRIOR_BIAS], [1.0, 0.0], 0.0)
    pull = [scale * p for p in prior] + [0.0]
    w = _newton(rows, [*pull[:-1], bias], pull, l2)
    return {n: w[i] for i, n in enumerate(names)}, w[-1]


def scores(data: list[Example], weights: dict[str, float], bias: float) -> list[float]:
    return [salience.probability(bias + sum(weights[k] * v for k, v in ex.features.items())) for ex in data]


def log_loss(data: list[Example], probs: list[float]) -> float:
    eps = 1e-9
    return -sum(
        math.log(p + eps) if ex.label else math.log(1 - p + eps) for ex, p in zip(data, probs, strict=True)
    )


def precision_recall(
    data: list[Example], probs: list[float], threshold: float
) -> tuple[float, float, int, int]:
    """(precision, recall, selected, keep) of `keep` entries at `threshold`."""
    chosen = [ex for ex, p in zip(data, probs, strict=True) if p >= threshold]
    hits = sum(ex.label for ex in chosen)
    keep = sum(ex.label for ex in data)
    return (hits / len(chosen) if chosen else 0.0), (hits / keep if keep else 0.0), len(chosen), keep


def _f1(pairs: list[tuple[list[Example], list[float]]], threshold: float) -> float:
    hits = chosen = keep = 0
    for data, probs in pairs:
        p, _, n, k = precision_recall(data, probs, threshold)
        hits += round(p * n)
        chosen += n
        keep += k
    if not chosen or not hits:
        return 0.0
    precision, recall = hits / chosen, hits / keep
    return 2 * precision * recall / (precision + recall)


@dataclass
class Fitted:
    weights: dict[str, float]
    bias: float
    l2: float
    threshold: float
    report: list[str]


def cross_source(data: list[Example]) -> Fitted:
    """Step 3, then the fit on everything."""
    splits = [(g, [ex for ex in data if ex.group == g], [ex for ex in data if ex.group != g]) for g in GROUPS]
    held: dict[float, list[tuple[list[Example], list[float], list[Example], list[float]]]] = {}
    for l2 in L2_GRID:
        held[l2] = []
        for _g, train, test in splits:
            weights, bias = fit(train, l2)
            held[l2].append((train, scores(train, weights, bias), test, scores(test, weights, bias)))
    best_l2 = min(L2_GRID, key=lambda l2: (sum(log_loss(t, p) for _, _, t, p in held[l2]), l2))
    runs = held[best_l2]
    threshold = max(THRESHOLD_GRID, key=lambda t: (_f1([(te, pe) for _, _, te, pe in runs], t), -t))
    report = [f"l2 = {best_l2} (held-out log-loss), threshold = {threshold} (held-out F1)"]
    for (group, _, _), (train, ptrain, test, ptest) in zip(splits, runs, strict=True):
        tp, tr, _, tk = precision_recall(train, ptrain, threshold)
        hp, hr, _, hk = precision_recall(test, ptest, threshold)
        other = next(v for k, v in GROUPS.items() if k != group)
        report.append(
            f"fitted on {GROUPS[group]} ({len(train)} entries, {tk} keep): training precision {tp:.2f}, "
            f"recall {tr:.2f}; held out on {other} ({len(test)}, {hk} keep): precision {hp:.2f}, recall {hr:.2f}"
        )
    weights, bias = fit(data, best_l2)
    pa, ra, na, ka = precision_recall(data, scores(data, weights, bias), threshold)
    report.append(
        f"fitted on all ({len(data)} entries, {ka} keep): precision {pa:.2f}, recall {ra:.2f}, {na} kept"
    )
    return Fitted(weights, bias, best_l2, threshold, report)


def module_text(fitted: Fitted, count: int) -> str:
    lines = [
        '"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:',
        "re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the",
        "default threshold (a probability).",
        "",
        f"Fitted on {count} labelled entries of ../shared/quality/labels.jsonl that reach the engine;",
        *[f"{line}." if not line.endswith(".") else line for line in fitted.report],
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"BIAS = {fitted.bias:.2f}",
        f"THRESHOLD = {fitted.threshold}",
        f"L2 = {fitted.l2}",
        "WEIGHTS: dict[str, float] = {",
        *[f'    "{name}": {value:.2f},' for name, value in fitted.weights.items()],
        "}",
        "",
    ]
    return "\n".join(_wrap(line) for line in lines)


def _wrap(line: str, width: int = 100) -> str:
    if len(line) <= width or not line or line.startswith(("    ", "BIAS", "WEIGHTS")):
        return line
    words, out, current = line.split(), [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    out.append(current)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fit_salience", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write gitdream/dream/salience_weights.py")
    parser.add_argument("--check", action="store_true", help="exit 1 when the module differs from the fit")
    args = parser.parse_args(argv)
    shared = shared_dir()
    if shared is None:
        print("fit_salience: ../shared (real data and labels) is absent: nothing to fit", file=sys.stderr)
        return 2
    data = examples(shared)
    fitted = cross_source(data)
    text = module_text(fitted, len(data))
    for line in fitted.report:
        print(line)
    if args.check:
        same = WEIGHTS_MODULE.read_text(encoding="utf-8") == text
        print("salience_weights.py is " + ("what the fit gives" if same else "NOT what the fit gives"))
        return 0 if same else 1
    if args.write:
        WEIGHTS_MODULE.write_text(text, encoding="utf-8")
        print(f"wrote {WEIGHTS_MODULE.relative_to(ROOT)}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
