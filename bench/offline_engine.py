"""The offline dream at 1 000 / 10 000 / 100 000 raw entries: wall time and peak RSS.

Entries are synthetic but shaped like real ones (`build`): real log lines from
../shared/realdata (else a word list), 20 % exact repeats, 25 % near-duplicates (one word
or number changed), 15 % Chinese/Japanese sentences, ~200 headings, a few tags
(`--drift` for the worst case: variants of variants).

1. End to end: the entries are written as daily logs (100 entries a day) of one agent,
   committed in 10 commits, and `gitdream run --engine offline` runs as a process —
   reading the material from git, parsing, distilling, verifying, screening, integrating,
   committing, receipt. `max_units` is raised to the entry count so that every entry can
   become a unit (the worst case; the default caps a run at 500). The repository is reset
   between runs (not timed).
2. The engine alone, in a child process (`python -m bench.offline_engine --entries N`):
   `OfflineEngine.distill` and `integrate_experience` on the built entries, CPU time per
   phase and the child's peak RSS.

Baseline: the 1 000-entry run of the same loop; the ratio is time per entry against it
(1.0 = exactly linear). Targets: 100 000 entries under 60 s and 500 MB; time roughly
linear in entries (time-per-entry ratio ≤ 2 at 100×).

    python -m bench --only offline_engine
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

from bench import repos  # noqa: E402
from bench.harness import (  # noqa: E402
    Figure,
    Row,
    Settings,
    Table,
    git,
    gitdream_cmd,
    interleave,
    median,
    ratio,
    run_child,
    secs,
)
from gitdream.units import Entry  # noqa: E402

NAME = "offline_engine"
TITLE = "Offline dream at 1k / 10k / 100k entries: wall time and peak RSS"
TARGET_SECONDS = 60.0
TARGET_MB = 500.0
TARGET_LINEAR = 2.0
PER_DAY = 100
COMMITS = 10

CJK_PHRASES = [
    "部署前必须先在预发布环境跑一遍冒烟测试",
    "数据库备份每天凌晨两点执行",
    "东京区域的服务器在夜间批处理期间响应变慢",
    "回滚需要上一个镜像标签",
    "用户更喜欢简短的回复",
    "日志轮转每周一次",
    "证书将在下个月到期",
    "缓存命中率下降到百分之六十",
    "東京リージョンのサーバーは夜間バッチの間だけ応答が遅くなる",
    "ドキュメント文字列は英語で書く",
    "返信は日本語で簡潔にする",
    "テストの後片付けには専用の関数を使う",
    "キーボード入力の押下時間は調整が必要",
    "ビルドキャッシュは毎晩クリアされる",
]
WORDS = ["quickly", "again", "now", "later", "twice", "server", "queue", "cache", "tag", "build"]


def real_lines() -> list[str]:
    """Lines of the real daily logs in ../shared/realdata (else generated word salad)."""
    for shared in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        logs = sorted((shared / "realdata").glob("*/memory/2026-*.md"))
        if logs:
            lines = []
            for log in logs:
                lines += [ln for ln in log.read_text(encoding="utf-8").splitlines() if len(ln.strip()) > 20]
            return lines
    words = "deploy staging cache build test rollback tag image night batch server slow fast queue"
    rng = random.Random(0)
    return [" ".join(rng.choice(words.split()) for _ in range(12)) for _ in range(2000)]


def build(count: int, seed: int, drift: bool = False) -> list[Entry]:
    """`count` entries. Default: 20% exact repeats, 25% variants of a base line (one word or
    number changed), 15% Chinese/Japanese sentences made of two phrases, the rest real log
    lines tagged with a serial number. `drift`: variants are made from earlier variants (a
    random walk: large clusters of mutually similar facts, the worst case for the index)."""
    rng = random.Random(seed)
    base = real_lines()
    headings = [f"Topic {i} {rng.choice(['deploys', 'notes', 'research', 'ops'])}" for i in range(200)]
    entries: list[Entry] = []
    texts: list[str] = []
    start = date(2026, 1, 1)
    for i in range(count):
        roll = rng.random()
        if texts and roll < 0.20:
            text = rng.choice(texts)
        elif texts and roll < 0.45:
            words = (rng.choice(texts) if drift else rng.choice(base)).split()
            words[rng.randrange(len(words))] = rng.choice([*WORDS, str(rng.randint(0, 99))])
            text = " ".join(words)
        elif roll < 0.60:
            text = rng.choice(CJK_PHRASES) + "，" + rng.choice(CJK_PHRASES) + f"（{rng.randint(1, 30)}）"
        else:
            text = f"{rng.choice(base)} #{i}"
        texts.append(text)
        tags = ("ops",) if rng.random() < 0.05 else ()
        path = f"agents/bench/memory/logs/2026/{1 + i // 40000:02d}/log-{i // 1000}.md"
        entries.append(
            Entry(
                path,
                i % 1000 + 1,
                i % 1000 + 1,
                "- " + text,
                start + timedelta(days=i // 2000),
                ("2026 Daily Log", rng.choice(headings)),
                tags=tags,
            )
        )
    return entries


def log_commits(entries: list[Entry], agent_dir: str = "agents/a000") -> list[repos.Commit]:
    """The entries as daily logs of `PER_DAY` entries each (a heading wherever the
    entry's heading changes, `#ops` where it has that tag), spread over `COMMITS`
    commits."""
    files: list[tuple[str, bytes]] = []
    start = date(2026, 1, 1)
    for first in range(0, len(entries), PER_DAY):
        day = start + timedelta(days=first // PER_DAY)
        lines = [f"# {day.isoformat()}", ""]
        heading = None
        for entry in entries[first : first + PER_DAY]:
            if entry.context[-1] != heading:
                heading = entry.context[-1]
                lines += ["", f"## {heading}", ""]
            lines.append(entry.text + (" #ops" if entry.tags else ""))
        files.append((repos.log_path(agent_dir, day), ("\n".join(lines) + "\n").encode()))
    per_commit = max(1, -(-len(files) // COMMITS))
    commits = []
    for n, first in enumerate(range(0, len(files), per_commit)):
        chunk = dict(files[first : first + per_commit])
        commits.append(repos.Commit(chunk, message=f"logs {n}", when=repos.EPOCH + 86400 * (n + 1)))
    return commits


def _reset(repo: Path, input_commit: str, env: dict[str, str]) -> None:
    """Undo a dream (not timed): branch, working tree, gitdream's refs and state."""
    import shutil

    git(repo, "reset", "-q", "--hard", input_commit, env=env)
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/gitdream", "refs/notes", env=env)
    for ref in refs.split():
        git(repo, "update-ref", "-d", ref, env=env)
    shutil.rmtree(repo / ".git" / "gitdream", ignore_errors=True)


def _end_to_end(
    settings: Settings, tmp: Path, env: dict[str, str], sizes: tuple[int, ...], figure: Figure
) -> None:
    runs = settings.reps(3, 1)
    cases = {}
    rss: dict[int, list[float]] = {size: [] for size in sizes}
    receipts: dict[int, dict] = {}
    for size in sizes:
        repo = tmp / f"dream-{size}"
        history = [repos.Commit({**repos.agent_files("a000"), "gitdream.toml": b'agents = ["agents/*"]\n'})]
        history += log_commits(build(size, seed=1))
        ids = repos.fast_import(repo, history, env)
        repos.checkout(repo, env)
        run_env = dict(env, GITDREAM_MAX_UNITS=str(size))

        def case(repo: Path = repo, size: int = size, input_commit: str = ids[-1], run_env=run_env) -> float:
            result = run_child(gitdream_cmd("run", "--engine", "offline", "--json"), repo, run_env)
            receipt = json.loads(result.stdout)["runs"][0]
            assert receipt["status"] == "ok", receipt
            receipts[size] = receipt
            rss[size].append(result.rss_mib)
            _reset(repo, input_commit, env)
            return result.seconds

        cases[size] = case
    if not settings.quick:
        cases[sizes[0]]()  # warm-up (bytecode, page cache), not counted
        rss[sizes[0]].clear()
    samples = interleave({str(k): v for k, v in cases.items()}, runs, warmup=0)
    figure.samples.update({f"run {k}": v for k, v in samples.items()})
    figure.samples.update({f"run rss {k}": v for k, v in rss.items()})
    med = {size: median(samples[str(size)]) for size in sizes}
    table = Table(
        f"`gitdream run --engine offline` (a process) over one agent's new daily logs, "
        f"`max_units` = entries; median of {runs} interleaved runs. Linearity: the marginal "
        "time per entry between one size and the next, against the first such step (1.00× = "
        "exactly linear; the fixed cost of a run, start-up and commit, cancels out):",
        columns=("entries", "wall time", "peak RSS", "marginal per entry (ratio)", "target", ""),
    )
    first_step: float | None = None
    for index, size in enumerate(sizes):
        seconds = med[size]
        peak = max(rss[size])
        marginal_cell, ok, target = "—", None, "baseline"
        ok_linear = True
        if index > 0:
            step = (seconds - med[sizes[index - 1]]) / (size - sizes[index - 1])
            if first_step is None:
                first_step = step
                marginal_cell = f"{step * 1e6:.0f} µs (step baseline)"
            else:
                ok_linear = step / first_step <= TARGET_LINEAR
                marginal_cell = f"{step * 1e6:.0f} µs ({ratio(step, first_step)})"
                target, ok = f"≤ {TARGET_LINEAR:g}×", ok_linear
        if size == sizes[-1]:
            target = f"< {TARGET_SECONDS:g} s, < {TARGET_MB:g} MB" + (
                f", ≤ {TARGET_LINEAR:g}×" if index > 1 else ""
            )
            ok = ok_linear and seconds < TARGET_SECONDS and peak < TARGET_MB
        table.rows.append(
            Row(
                f"{size} ({_counts(receipts[size])})",
                secs(seconds),
                f"{peak:.0f} MB",
                marginal_cell,
                target,
                ok,
            )
        )
    figure.tables.append(table)


def _counts(receipt: dict) -> str:
    counts = receipt.get("counts") or {}
    return (
        f"{counts.get('entries', '?')} entries read, {counts.get('units', '?')} units, "
        f"{counts.get('created', '?')} created, {counts.get('corroborated', '?')} corroborated"
    )


def _engine_alone(
    settings: Settings, tmp: Path, env: dict[str, str], sizes: tuple[int, ...], figure: Figure
) -> None:
    runs = settings.reps(3, 1)
    results: dict[int, list[dict]] = {size: [] for size in sizes}

    def case(size: int):
        def run_one() -> float:
            cmd = [sys.executable, "-m", "bench.offline_engine", "--entries", str(size)]
            child = run_child(cmd, ROOT, env)
            document = json.loads(child.stdout)
            document["rss_wait4"] = child.rss_mib
            results[size].append(document)
            return document["distill"] + document["integrate"]

        return run_one

    samples = interleave({str(s): case(s) for s in sizes}, runs, warmup=0)
    figure.samples.update({f"engine {k}": v for k, v in samples.items()})
    table = Table(
        f"The engine alone (`python -m bench.offline_engine --entries N`, a child process): "
        f"CPU seconds of distill and integrate, median of {runs}; per entry, and its ratio "
        f"to the {sizes[0]}-entry run:",
        columns=("entries", "distill", "integrate", "peak RSS", "per entry (ratio)", "units"),
    )
    base = None
    for size in sizes:
        docs = results[size]
        distill = median([d["distill"] for d in docs])
        integrate = median([d["integrate"] for d in docs])
        per = (distill + integrate) / size
        base = base or per
        table.rows.append(
            [
                str(size),
                secs(distill),
                secs(integrate),
                f"{max(d['rss_wait4'] for d in docs):.0f} MB",
                f"{per * 1e6:.0f} µs ({ratio(per, base)})",
                f"{docs[-1]['units']} units, {docs[-1]['created']} created, "
                f"{docs[-1]['corroborated']} corroborated",
            ]
        )
    figure.tables.append(table)


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    sizes = settings.pick((1_000, 10_000, 100_000), (50, 100))
    _end_to_end(settings, tmp, env, sizes, figure)
    _engine_alone(settings, tmp, env, sizes[:1] if settings.quick else sizes, figure)
    return figure


def main() -> None:
    """Child mode: build N entries, distill and integrate them, print JSON (CPU seconds
    per phase, counts, peak RSS)."""
    parser = argparse.ArgumentParser(description="the offline engine alone on N synthetic entries")
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--max-units", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drift", action="store_true", help="worst case: variants of variants")
    args = parser.parse_args()

    from gitdream.agents import make_agent
    from gitdream.config import defaults
    from gitdream.contract import DistillContext, MemoryView
    from gitdream.dream.integrate import integrate_experience
    from gitdream.engines.offline import OfflineEngine
    from tests.standins import simple_absolutize, simple_slugify

    max_units = args.max_units or args.entries
    cfg = defaults().with_overrides({"max_units": (max_units, "bench")})
    agent = make_agent("agents/bench", cfg)
    t0 = time.process_time()
    entries = build(args.entries, args.seed, args.drift)
    t1 = time.process_time()
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    context = DistillContext(agent, entries, MemoryView({}), cfg, "0" * 40, date(2026, 6, 1))
    result = engine.distill(context)
    t2 = time.process_time()
    experience = [u for u in result.units if u.target == "experience"]
    integrated = integrate_experience(
        agent, {}, experience, input_commit="0" * 40, today=date(2026, 6, 1), cfg=cfg
    )
    t3 = time.process_time()
    document = {
        "entries": len(entries),
        "build": t1 - t0,
        "distill": t2 - t1,
        "integrate": t3 - t2,
        "units": len(result.units),
        "files": len(integrated.changes),
        "created": integrated.created,
        "corroborated": integrated.corroborated,
        "rss_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(document))


if __name__ == "__main__":
    main()
