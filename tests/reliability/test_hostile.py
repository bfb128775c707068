"""Hostile and broken input (issue 8): every file of `corpus/` (see its README.md), and a
few inputs too big to commit, generated here — binary files, NUL bytes, broken encodings,
odd line endings, huge files and lines, broken Markdown and JSON Lines, YAML bombs,
managed-block markers, hostile names, symlinks out of the repository, a submodule and a Git
LFS pointer where a log should be.

Each is committed into a real repository and dreamed over with a real `gitdream run`
(in-process through click with GITDREAM_RAISE_ERRORS=1, so an internal error raises here;
a few as real processes). For each: exit 0, no traceback; the warnings the README promises,
naming file and line; nothing outside the agent's memory and the managed blocks of its
definitions changed (the dream commits and the working tree); the lines that should be kept
reach memory; names are safe; `gitdream check` is no worse than before; a second run writes
nothing.
"""

from __future__ import annotations

import base64
import json
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitdream.dream import memoryfiles
from tests.helpers import cli, commit_all, git, head, run_gitdream, write
from tests.reliability.probes import (
    LOGS,
    MEMORY,
    OPS,
    SESSIONS,
    assert_only_memory_written,
    dream,
    everything_written,
    memory_text,
    raw_blob_ids,
)

CORPUS = Path(__file__).parent / "corpus"
LOG = f"{LOGS}/2026/03/2026-03-07.md"
SESSION = f"{SESSIONS}/2026-03-07.jsonl"
TOPIC = f"{MEMORY}/deploy.md"
INDEX = f"{MEMORY}/MEMORY.md"
AGENT_MD = f"{OPS}/agent.md"
ROUTING_LOG = (
    "- [deploy] a fact for the deploy topic KEEPROUTED\n- be careful with rollbacks KEEPAGENTUNIT #agent\n"
)
INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Case:
    """How one corpus file is placed and what the dream must do with it.

    `warnings`: regular expressions, each matching one warning (`{path}` stands for where
    the file was committed); `keep`: markers that must reach memory; `lose`: markers that
    must not (lines that cannot be read); `pending`: the run leaves material to read again;
    `topics`: topic files (stems) the run must create.
    """

    place: str = "log"
    warnings: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    lose: tuple[str, ...] = ()
    pending: bool = False
    topics: tuple[str, ...] = ()


LEFT_ALONE = "gitdream left this topic alone"
CASES: dict[str, Case] = {
    "binary-png.md": Case(warnings=(r"{path}:3: skipped: binary content \(NUL byte at offset 8\)",)),
    "nul-padded-crash.md": Case(
        warnings=(r"{path}:4: NUL bytes removed",), keep=("KEEPNULBEFORE", "KEEPNULAFTER")
    ),
    "nul-in-line.md": Case(warnings=(r"{path}:1: NUL bytes removed",), keep=("KEEPNULINLINE", "KEEPNULNEXT")),
    "invalid-utf8-latin1.md": Case(
        warnings=(r"{path}:1: invalid UTF-8 replaced",), keep=("KEEPLATIN1", "KEEPLATINNEXT")
    ),
    "invalid-utf8-sequences.md": Case(
        warnings=tuple(rf"{{path}}:{n}: invalid UTF-8 replaced" for n in range(1, 6)),
        keep=("KEEPTRUNC", "KEEPOVERLONG", "KEEPSURR", "KEEPSTRAY", "KEEPRANGE"),
    ),
    "utf16le-bom.md": Case(
        warnings=(r"{path}: decoded as UTF-16 \(byte order mark\)",), keep=("KEEPUTF16LE",)
    ),
    "utf16be-bom.md": Case(
        warnings=(r"{path}: decoded as UTF-16 \(byte order mark\)",), keep=("KEEPUTF16BE",)
    ),
    "utf32le-bom.md": Case(warnings=(r"{path}: decoded as UTF-32 \(byte order mark\)",), keep=("KEEPUTF32",)),
    "utf16-no-bom.md": Case(warnings=(r"{path}:1: NUL bytes removed",), keep=("KEEPNOBOM",)),
    "utf8-bom.md": Case(keep=("KEEPUTF8BOM",)),
    "crlf.md": Case(keep=("KEEPCRLF", "KEEPCRLF2")),
    "lone-cr.md": Case(
        warnings=(r"{path}:1: lone CR \(carriage return\) kept inside the line",), keep=("KEEPLONECR",)
    ),
    "mixed-eol.md": Case(
        warnings=(r"{path}:3: lone CR",),
        keep=("KEEPMIXLF", "KEEPMIXCRLF", "KEEPMIXCR", "KEEPLS", "KEEPPS", "KEEPNEL", "KEEPVT", "KEEPFF"),
    ),
    "deep-nesting.md": Case(keep=("KEEPSEVEN", "KEEPNESTED", "KEEPQUOTE", "KEEPAFTERHASH")),
    "unterminated-fence.md": Case(
        warnings=(r"{path}:3: unterminated code fence runs to the end of the file",),
        keep=("KEEPFENCEITEM", "KEEPINFENCE"),
    ),
    "fence-tricks.md": Case(
        warnings=(r"{path}:7: unterminated code fence",), keep=("KEEPTILDE", "KEEPINDENTFENCE", "KEEPBADINFO")
    ),
    "block-markers.md": Case(
        keep=("KEEPMARKERFACT", "KEEPMARKERINSIDE", "KEEPMARKERINDEX", "KEEPMARKERAGENT", "KEEPOPENCOMMENT")
    ),
    "yaml-bomb-log.md": Case(keep=("KEEPAFTERBOMB",)),
    "zero-width-bidi-names.md": Case(
        keep=("KEEPZW", "KEEPRLO", "KEEPZWTAG", "KEEPZWHASH", "KEEPISOLATE"), topics=("deploys", "gpj-exe")
    ),
    "hostile-headings.md": Case(
        keep=tuple(
            f"KEEP{k}"
            for k in (
                "DOTDOT",
                "CON",
                "DOTGIT",
                "MEMORY",
                "AGENTMD",
                "DASH",
                "SEP",
                "EMOJI",
                "LONGHEAD",
                "DOTS",
            )
        ),
        topics=("etc-passwd", "con-topic", "git", "memory-topic", "agent-md", "rf-no-preserve-root"),
    ),
    "control-chars.md": Case(keep=("KEEPANSI", "KEEPBS")),
    "html-and-links.md": Case(keep=("KEEPJSLINK", "KEEPSCRIPT", "KEEPIMG")),
    "only-noise.md": Case(),
    "empty.md": Case(),
    "whitespace-only.md": Case(),
    "impossible-dates.md": Case(keep=("KEEPFEB30", "KEEPNINES", "KEEPYEAR0")),
    "lfs-pointer.md": Case(warnings=(r"{path}:1: skipped: a Git LFS pointer",)),
    "malformed.jsonl": Case(
        place="transcript",
        warnings=(
            *(
                rf"{{path}}:{n}: not valid JSON \(malformed or truncated\); line skipped"
                for n in (2, 9, 13, 16)
            ),
            *(rf"{{path}}:{n}: not a JSON object; line skipped" for n in (3, 4, 5, 6, 7)),
            r"{path}:14: a \\u0000 escape was removed, or an unpaired surrogate escape replaced",
            r"{path}:15: a \\u0000 escape was removed",
            r"{path}:8: a record without a string type or role",
        ),
        keep=(
            "KEEPJSONOK",
            "KEEPNAN",
            "KEEPINF",
            "KEEPHUGE",
            "KEEPSURROGATE",
            "KEEPESCNUL",
            "KEEPDUP",
            "KEEPJSONLAST",
        ),
        lose=("KEEPJSONTRUNC",),
    ),
    "unknown-records.jsonl": Case(
        place="transcript",
        warnings=(
            r"{path}:2: record type 'made-up-type' is not one gitdream reads; skipped",
            r"{path}:4: content block type 'hologram' is not one gitdream reads",
            r"{path}:4: a text block whose text is not a string",
            r"{path}:6: content block type \(a list value of 8 characters\)",
            r"{path}:9: a record without a string type or role",
        ),
        keep=(
            "KEEPCCUSER",
            "KEEPCCASSIST",
            "KEEPBARE",
            "KEEPLISTBLOCK",
            "KEEPROLELIST",
            "KEEPPLAINLIST",
            "KEEPINJECT",
        ),
        lose=("KEEPNOTREAD", "KEEPTYPELIST"),
    ),
    "transcript-utf16.jsonl": Case(
        place="transcript", warnings=(r"{path}: decoded as UTF-16",), keep=("KEEPJSONUTF16",)
    ),
    "transcript-crash-garbage.jsonl": Case(
        place="transcript",
        warnings=(r"{path}:3: NUL bytes removed", r"{path}:3: not valid JSON"),
        keep=("KEEPCRASH1", "KEEPCRASH2", "KEEPCRASH3"),
    ),
    "topic-yaml-bomb.md": Case(
        place="topic",
        warnings=(rf"{{path}}:5: front matter uses a YAML alias .*; {LEFT_ALONE}",),
        keep=("KEEPAGENTUNIT",),
        lose=("KEEPROUTED",),
        pending=True,
    ),
    "topic-origin-bomb.md": Case(
        place="topic",
        warnings=(rf"{{path}}:6: front matter uses a YAML alias .*; {LEFT_ALONE}",),
        lose=("KEEPROUTED",),
        pending=True,
    ),
    "topic-invalid-yaml.md": Case(
        place="topic",
        warnings=(rf"{{path}}:3: front matter is not valid YAML.*; {LEFT_ALONE}",),
        pending=True,
    ),
    "topic-unterminated-front-matter.md": Case(
        place="topic",
        warnings=(rf"{{path}}:1: front matter opened with '---' on line 1 is never closed; {LEFT_ALONE}",),
        pending=True,
    ),
    "topic-deep-yaml.md": Case(
        place="topic", warnings=(rf"{{path}}:3: front matter .*; {LEFT_ALONE}",), pending=True
    ),
    "memory-index-broken-markers.md": Case(
        place="index",
        warnings=(r"{path}:3: end of block 'index' without a matching begin; the index was not updated",),
        keep=("KEEPROUTED", "KEEPAGENTUNIT"),
    ),
    "agent-yaml-bomb.md": Case(
        place="agent.md",
        warnings=(r"{path}:5: front-matter: front matter uses a YAML alias",),
        keep=("KEEPAGENTUNIT",),
    ),
    "agent-invalid-yaml.md": Case(
        place="agent.md",
        warnings=(r"{path}:3: front-matter: front matter is not valid YAML",),
        keep=("KEEPAGENTUNIT",),
    ),
}
PLACES = {"log": LOG, "transcript": SESSION, "topic": TOPIC, "index": INDEX, "agent.md": AGENT_MD}


def test_every_corpus_file_has_a_case_and_a_line_in_the_readme() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name != "README.md" and not p.name.startswith(".")}
    assert files == set(CASES)
    assert len(files) >= 30
    readme = (CORPUS / "README.md").read_text()
    for name, case in CASES.items():
        assert re.search(rf"^\| `{re.escape(name)}` \| {re.escape(case.place)} \|", readme, re.M), name


def _check_code(root: Path) -> int:
    return cli(root, "check").exit_code


def _assert_sound(root: Path, before: str, check_before: int) -> str:
    """The invariants every hostile input keeps (module docstring); returns memory text."""
    paths = assert_only_memory_written(root, before)
    for path in paths:
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        if path.startswith(f"{MEMORY}/") and "/" not in path[len(MEMORY) + 1 :]:
            assert stem == "MEMORY" or memoryfiles.safe_slug(stem), path
    memory = memory_text(root)
    assert not INVISIBLE.search(memory), "control or bidi characters reached memory"
    assert _check_code(root) <= check_before
    return memory


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_file(agent_repo: Path, name: str) -> None:
    case = CASES[name]
    path = PLACES[case.place]
    data = (CORPUS / name).read_bytes()
    if case.place != "log" and case.place != "transcript":
        write(agent_repo, LOG, ROUTING_LOG)
    if name == "lfs-pointer.md":
        write(agent_repo, ".gitattributes", f"{LOGS}/** filter=lfs diff=lfs merge=lfs -text\n")
    write(agent_repo, path, data)
    before = commit_all(agent_repo, f"hostile input {name}")
    check_before = _check_code(agent_repo)

    receipt = dream(agent_repo)
    assert receipt["status"] in ("ok", "noop"), receipt["error"]
    warnings = receipt["warnings"]
    for pattern in case.warnings:
        regex = re.compile(pattern.replace("{path}", re.escape(path)))
        assert any(regex.match(w) for w in warnings), f"no warning like {pattern!r} in {warnings}"
        assert any(regex.search(line) for line in receipt["_stderr"].splitlines()), "warnings are printed too"
    memory = _assert_sound(agent_repo, before, check_before)
    for marker in case.keep:
        assert marker in memory, f"{marker} was lost"
    for marker in case.lose:
        assert marker not in memory, f"{marker} should not have been read"
    assert bool(receipt["pending"]) is case.pending, receipt["pending"]
    for stem in case.topics:
        assert (agent_repo / MEMORY / f"{stem}.md").is_file(), stem

    for command in (
        ("audit",),
        ("log", "--all"),
        ("show", receipt["run"]),
        ("status",),
    ):  # review reads it too
        shown = cli(agent_repo, *command)
        assert shown.exit_code == 0, (command, shown.stdout, shown.stderr)
    tip = head(agent_repo)
    again = dream(agent_repo)
    assert head(agent_repo) == tip, "a second run over the same input writes nothing"
    assert bool(again["pending"]) is case.pending


def test_yaml_bomb_topic_is_left_byte_for_byte(agent_repo: Path) -> None:
    bomb = (CORPUS / "topic-yaml-bomb.md").read_bytes()
    write(agent_repo, TOPIC, bomb)
    write(agent_repo, LOG, ROUTING_LOG)
    commit_all(agent_repo, "a billion laughs")
    dream(agent_repo)
    assert (agent_repo / TOPIC).read_bytes() == bomb
    assert git(agent_repo, "log", "--format=%s", "--", TOPIC).splitlines() == ["a billion laughs"]


@pytest.mark.parametrize("name", ["malformed.jsonl", "binary-png.md", "topic-yaml-bomb.md"])
def test_corpus_file_in_a_real_process(agent_repo: Path, name: str) -> None:
    case = CASES[name]
    if case.place == "topic":
        write(agent_repo, LOG, ROUTING_LOG)
    write(agent_repo, PLACES[case.place], (CORPUS / name).read_bytes())
    before = commit_all(agent_repo, name)
    done = run_gitdream(agent_repo, "run")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert f"{PLACES[case.place]}:" in done.stderr, "the warning names the file and line"
    assert_only_memory_written(agent_repo, before)


# --- generated inputs: too big, or too odd, to commit ----------------------------------------------


def test_a_50_mb_log_is_skipped_without_loading_it_and_left_pending(agent_repo: Path) -> None:
    big = agent_repo / LOG
    big.parent.mkdir(parents=True, exist_ok=True)
    line = b"  at frame 1234 in module.function (file.py:42) 0123456789abcdef\n"
    with big.open("wb") as out:
        out.write(b"- [big] before the dump KEEPBEFOREDUMP\n- [big] the dump:\n\n  ```\n")
        for _ in range(50 * 1024 * 1024 // len(line)):
            out.write(line)
        out.write(b"  ```\n\n- [big] after the dump KEEPAFTERDUMP\n")
    size = big.stat().st_size
    write(agent_repo, f"{LOGS}/2026/03/2026-03-08.md", "- [small] a small log beside it KEEPSMALL\n")
    before = commit_all(agent_repo, "a 50 MB log")
    done = run_gitdream(agent_repo, "run", "--json")
    assert done.returncode == 0, done.stderr
    assert f"{LOG}: skipped: {size} bytes is over max_file_bytes (10000000)" in done.stderr
    receipt = json.loads(done.stdout)["runs"][0]
    assert [(p["path"], p["reason"]) for p in receipt["pending"]] == [(LOG, "over max_file_bytes")]
    assert "KEEPSMALL" in memory_text(agent_repo)
    assert_only_memory_written(agent_repo, before)


def test_one_5_mb_line_without_spaces(agent_repo: Path) -> None:
    blob = base64.b64encode(random.Random(5).randbytes(3_750_000)).decode()
    write(agent_repo, LOG, f"- [big] {blob}\n- [big] after the long line KEEPAFTERBIG\n")
    before = commit_all(agent_repo, "one 5 MB line")
    receipt = dream(agent_repo)
    memory = _assert_sound(agent_repo, before, 0)
    assert "KEEPAFTERBIG" in memory
    assert blob[:12] not in memory, "a token longer than a fact is never kept in part"
    assert any("unbroken token" in reason for reason in receipt["skipped"])


def test_10000_one_character_lines(agent_repo: Path) -> None:
    chars = ["-", "#", "a", "中", ">", "`", "*", "1", "=", "~", "|", "[", "\\", " ", "+", "_"]
    write(agent_repo, LOG, "".join(chars[i % len(chars)] + "\n" for i in range(10_000)))
    before = commit_all(agent_repo, "10 000 one-character lines")
    receipt = dream(agent_repo)
    assert receipt["phases"]["gather"]["entries"] > 0
    _assert_sound(agent_repo, before, 0)


def test_long_runs_that_were_quadratic_finish(agent_repo: Path) -> None:
    runs = {
        "spaces": " ",
        "underscores": "_",
        "brackets": "[",
        "hyphenated": "a-",
        "dotted": "a.",
        "tabs": "\t",
    }
    lines = []
    for name, run in runs.items():
        filler = run * (200_000 // len(run))
        lines += [
            f"## {name} {filler} heading",
            "",
            f"- [runs] {name}: a{filler}b #runs KEEPRUN{name.upper()}",
            "",
        ]
    write(agent_repo, LOG, "\n".join(lines) + "\n")
    before = commit_all(agent_repo, "long runs")
    done = run_gitdream(agent_repo, "run", timeout=120)
    assert done.returncode == 0, done.stderr
    memory = _assert_sound(agent_repo, before, 0)
    assert "KEEPRUNSPACES" in memory and "KEEPRUNTABS" in memory


# --- symlinks, submodules ---------------------------------------------------------------------------

OUTSIDE_TEXT = "OUTSIDE-THE-REPOSITORY-7f3a9c: if you read this, gitdream followed a symlink"


def _outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write(folder, "secret.md", f"- [leak] {OUTSIDE_TEXT}\n")
    write(folder, "memory/logs/2026/03/2026-03-01.md", f"- [leak] {OUTSIDE_TEXT}\n")
    write(folder, "memory/MEMORY.md", "# outside index\n")
    return folder


def _assert_outside_untouched(root: Path, folder: Path, before: dict[str, bytes]) -> None:
    assert OUTSIDE_TEXT not in everything_written(root, own=raw_blob_ids(root))
    after = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before, "nothing outside the repository is written"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_symlinked_log_pointing_outside_is_not_read(agent_repo: Path, tmp_path: Path) -> None:
    folder = _outside(tmp_path)
    saved = _snapshot(folder)
    link = agent_repo / LOG
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(folder / "secret.md")
    write(agent_repo, f"{LOGS}/2026/03/2026-03-08.md", "- [ok] a regular log beside it KEEPREGULAR\n")
    before = commit_all(agent_repo, "a symlink as a log")
    assert git(agent_repo, "ls-files", "-s", LOG).startswith("120000")
    receipt = dream(agent_repo)
    assert f"{LOG}: not a regular file (symlink or submodule); skipped" in receipt["warnings"]
    assert "KEEPREGULAR" in _assert_sound(agent_repo, before, 0)
    _assert_outside_untouched(agent_repo, folder, saved)


def test_symlinked_agent_and_logs_folders_are_not_followed(agent_repo: Path, tmp_path: Path) -> None:
    folder = _outside(tmp_path)
    saved = _snapshot(folder)
    (agent_repo / "agents/evil").symlink_to(folder)  # an agent directory that is a symlink
    (agent_repo / LOGS / "2026").mkdir(parents=True)
    (agent_repo / LOGS / "2026/04").symlink_to(folder / "memory/logs/2026/03")  # a logs folder
    write(agent_repo, LOG, "- [ok] a regular log KEEPREGULAR\n")
    before = commit_all(agent_repo, "symlinked folders")
    receipt = dream(agent_repo)
    assert receipt["agent"] == "ops" and receipt["commits"]["experience"]
    assert "KEEPREGULAR" in _assert_sound(agent_repo, before, 0)
    _assert_outside_untouched(agent_repo, folder, saved)


def test_a_submodule_where_a_log_should_be_is_skipped(agent_repo: Path, tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    write(sub, "log.md", f"- [leak] {OUTSIDE_TEXT}\n")
    commit_all(sub, "submodule content")
    git(agent_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), LOG)
    write(agent_repo, f"{LOGS}/2026/03/2026-03-08.md", "- [ok] a regular log KEEPREGULAR\n")
    before = commit_all(agent_repo, "a submodule named like a log")
    assert git(agent_repo, "ls-files", "-s", LOG).startswith("160000")
    receipt = dream(agent_repo)
    assert f"{LOG}: not a regular file (symlink or submodule); skipped" in receipt["warnings"]
    assert "KEEPREGULAR" in _assert_sound(agent_repo, before, 0)
    assert OUTSIDE_TEXT not in everything_written(agent_repo, own=raw_blob_ids(agent_repo))
    status = subprocess.run(["git", "status", "--porcelain"], cwd=agent_repo, capture_output=True, text=True)
    assert status.stdout == ""
