"""Scale check of the offline engine and experience integration (run by hand, not in tests).

    python bench/offline_engine.py [--entries 100000] [--max-units N] [--seed 1]

Builds N synthetic raw entries from real log lines (../shared/realdata when present, else a
built-in word list): repeats, near-duplicates, Chinese/Japanese sentences, ~200 headings, a
few tags (see `build`; `--drift` for the worst case). Then runs OfflineEngine.distill and
integrate_experience on the result and prints CPU time (process time: steadier than wall time on a shared machine) and peak resident memory.
max_units defaults to the number of entries so that every entry is processed.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitdream.agents import make_agent  # noqa: E402
from gitdream.config import defaults  # noqa: E402
from gitdream.dream.integrate import integrate_experience  # noqa: E402
from gitdream.engines import DistillContext, MemoryView  # noqa: E402
from gitdream.engines.offline import OfflineEngine  # noqa: E402
from gitdream.units import Entry  # noqa: E402
from tests.standins import simple_absolutize, simple_slugify  # noqa: E402

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


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--max-units", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drift", action="store_true", help="worst case: variants of variants")
    args = parser.parse_args()
    max_units = args.max_units or args.entries
    cfg = defaults().with_overrides({"max_units": (max_units, "bench")})
    agent = make_agent("agents/bench", cfg)

    t0 = time.process_time()
    entries = build(args.entries, args.seed, args.drift)
    t1 = time.process_time()
    print(f"built {len(entries)} entries in {t1 - t0:.1f} s; peak RSS so far {rss_mb():.0f} MB")

    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    context = DistillContext(agent, entries, MemoryView({}), cfg, "0" * 40, date(2026, 6, 1))
    result = engine.distill(context)
    t2 = time.process_time()
    print(
        f"distill: {t2 - t1:.1f} s, {len(result.units)} units, stats {result.stats}; peak RSS {rss_mb():.0f} MB"
    )

    experience = [u for u in result.units if u.target == "experience"]
    integrated = integrate_experience(
        agent, {}, experience, input_commit="0" * 40, today=date(2026, 6, 1), cfg=cfg
    )
    t3 = time.process_time()
    print(
        f"integrate: {t3 - t2:.1f} s, {len(integrated.changes)} files, {integrated.created} created, "
        f"{integrated.corroborated} corroborated; peak RSS {rss_mb():.0f} MB"
    )
    print(f"total {t3 - t0:.1f} s")


if __name__ == "__main__":
    main()
