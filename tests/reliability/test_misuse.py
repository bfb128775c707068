"""Misuse and hostile input (issue 16, case 14): a review branch named HEAD, a memory
folder that is the raw logs' folder, terminal escapes in the material, forged trailers on
a person's commit, and many agents."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gitdream import ids
from tests.helpers import commit_all, git, run_gitdream, write
from tests.reliability.support import LOGS, MEMORY, agent_repo, deep_notes, material, prepared


def _ops(root: Path) -> dict[str, object]:
    agent_repo(root)
    material(root)
    return {}


BAD_BRANCHES = {
    "HEAD": "is not a valid branch name",
    "-x": "is not a valid branch name",
    "@": "git reads @ as HEAD",
    "FETCH_HEAD": "git reads FETCH_HEAD as the file .git/FETCH_HEAD",
    "ORIG_HEAD": "git reads ORIG_HEAD as the file .git/ORIG_HEAD",
    "refs/heads/x": "git reads refs/heads/x as the full ref name",
    "origin/main": "origin is a remote",
    "v1": "git would read v1 as refs/tags/v1",
    "gitdream/watermark/ops": "git would read gitdream/watermark/ops as refs/gitdream/watermark/ops",
}


@pytest.mark.parametrize("command", ["run", "revert"])
def test_a_review_branch_git_reads_as_another_ref_is_refused(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, command: str
) -> None:
    """`--branch HEAD` made `refs/heads/HEAD`; `@`, `FETCH_HEAD`, `ORIG_HEAD`, `refs/…`,
    `origin/main` (a remote's branch), a tag's or another ref's name still made branches
    that every later `git` command reads as something else. Each is a usage error (exit 2)
    naming why and the allowed form, before anything is written."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    assert run_gitdream(root, "run").returncode == 0
    git(root, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    git(root, "tag", "v1")
    before = git(root, "for-each-ref")
    for name, why in BAD_BRANCHES.items():
        args = ["run", "--branch", name] if command == "run" else ["revert", "last", "--branch", name]
        done = run_gitdream(root, *args)
        assert done.returncode == 2, (name, done.stderr)
        assert why in done.stderr and "refs/heads/" in done.stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert git(root, "for-each-ref") == before


@pytest.mark.parametrize("glob", ["memory/?????.md", "memory/[a-z]*.md", "memory/*-*.md"])
def test_a_raw_material_glob_that_matches_only_some_topic_names_is_refused(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, glob: str
) -> None:
    """The check tried one topic name ("a-topic.md"): a glob matching topic names of
    another length or shape got past it, and the dream then wrote among its raw files."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    write(root, "gitdream.toml", f'log_globs = ["memory/logs/**/*.md", "{glob}"]\n')
    commit_all(root, "logs beside the topics")
    done = run_gitdream(root, "run")
    assert done.returncode == 1, done.stderr
    assert f"matches the raw-material glob '{glob}'" in done.stderr, done.stderr
    assert git(root, "for-each-ref", "refs/gitdream") == "", "nothing was consumed"


def test_daily_logs_named_by_date_beside_the_topics_are_allowed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """OpenClaw's layout, `memory/2026-03-01.md` beside the topics: gitdream never names a
    topic after a date, so a date-shaped glob does not clash."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    write(root, "gitdream.toml", 'log_globs = ["memory/logs/**/*.md", "memory/????-??-??.md"]\n')
    commit_all(root, "dated logs beside the topics")
    done = run_gitdream(root, "run")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("spelling", ["memory/logs", "./memory/logs", "memory//logs", "memory/./logs/"])
def test_a_memory_dir_holding_the_raw_logs_is_refused(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, spelling: str
) -> None:
    """However the folder is spelt: `./memory/logs` and `memory//logs` got past the check
    and every run then failed at the write gate. Relative paths of the configuration are
    read in their normal form."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    write(root, "gitdream.toml", f'memory_dir = "{spelling}"\n')
    commit_all(root, "memory in the logs folder")
    done = run_gitdream(root, "run")
    assert done.returncode == 1, done.stderr
    assert "memory_dir 'memory/logs' is where the raw material is" in done.stderr
    assert git(root, "for-each-ref", "refs/gitdream") == "", "nothing was consumed"


ESCAPES = "\x1b]52;c;ZWNobyBldmls\x07\x1b[2J\x1b[31mred\x1b[0m\x9b6n\u202eevil"


def test_audit_and_show_print_no_terminal_escape_from_the_material(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    write(root, f"{LOGS}/2026-03-03.md", f"- [deploy] The banner read {ESCAPES} before the deploy.\n")
    commit_all(root, "a log with terminal escapes")
    assert run_gitdream(root, "run").returncode == 0
    for args in (("audit", "ops"), ("show", "last"), ("log",), ("run", "--full", "--dry-run")):
        done = run_gitdream(root, *args)
        printed = done.stdout + done.stderr
        for char in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert char not in printed, (args, repr(char))
    assert "\\x1b]52" in run_gitdream(root, "audit", "ops").stdout  # shown, not acted on
    # --json documents escape them too, and still decode to the text as written.
    for args in (("audit", "ops", "--json"), ("show", "last", "--json")):
        done = run_gitdream(root, *args)
        assert done.returncode == 0, done.stderr
        for char in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert char not in done.stdout, (args, repr(char))
    document = json.loads(run_gitdream(root, "audit", "ops", "--json").stdout)
    assert any(ESCAPES in text for text in _strings(document))


def _strings(value: object) -> list[str]:
    """Every string in a decoded JSON document."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_log_whose_name_holds_terminal_escapes_is_not_cited(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A raw file's name is cited in the topic file, the commit message and the receipt.
    A log committed as `2026-03-03<OSC 52>.md` put a clipboard write into `deploy.md` and
    into the commit message (`cat`, `git log --no-pager` act on it); a line break in a name
    split the citation, a bidi override reordered it. Such a file is skipped with a warning
    that shows its name escaped and how to have it read; the other material is dreamed."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    names = [f"2026-03-03{ESCAPES}.md", "2026-03-04\n- Forged fact.\n.md", "2026-03-05\u202egnp.md"]
    for name in names:
        write(root, f"{LOGS}/{name}", "- [deploy] A fact from a file with a hostile name.\n")
    commit_all(root, "logs with hostile names")
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 0, done.stderr
    (receipt,) = json.loads(done.stdout)["runs"]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"], receipt
    written = git(root, "log", "--format=%B", "-2") + "".join(
        git(root, "show", f"HEAD:{path}")
        for path in git(root, "ls-tree", "-r", "--name-only", "HEAD", MEMORY).split("\n")
        if path and "/logs/" not in path
    )
    assert "Forged fact" not in written and "hostile name" not in written, written
    written += git(root, "notes", "--ref", "gitdream", "show", receipt["input_commit"])
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in written, repr(char)
    assert done.stderr.count("the file name holds control characters") == 3, done.stderr
    assert "2026-03-03\\x1b]52;c;" in done.stderr and "git mv" in done.stderr
    assert "2026-03-04\\x0a- Forged fact.\\x0a.md" in done.stderr


def test_forged_trailers_on_a_persons_commit_do_not_let_revert_undo_it(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Before, a person's commit whose message carried Gitdream-* trailers (pasted, or
    forged) was a run to `gitdream revert`, which undid the person's edit."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    assert run_gitdream(root, "run").returncode == 0
    edited = "---\nname: human\ndescription: written by a person\ntype: note\n---\n\nEdited.\n"
    write(root, f"{MEMORY}/human.md", edited)
    git(root, "add", "-A")
    # newer than the real run, so `last` names the forged one (a fixed id stopped being
    # newer once the calendar passed it)
    forged = ids._encode(int((time.time() + 86_400) * 1000), ids.TIME_CHARS) + "zzz"
    git(
        root,
        "commit",
        "-q",
        "-m",
        f"a person's edit\n\nGitdream-Run: {forged}\nGitdream-Kind: experience\nGitdream-Agent: ops\n",
    )
    before = git(root, "rev-parse", "HEAD")
    for target in (forged, "last"):  # `last` is the newest run with a commit in HEAD: the forged one
        done = run_gitdream(root, "revert", target)
        assert done.returncode == 1 and "has no receipt here" in done.stderr, done.stderr
        assert git(root, "rev-parse", "HEAD") == before
        assert (root / MEMORY / "human.md").read_text() == edited, f"revert {target} undid the person's edit"


def _person_commits_with_trailers_of(root: Path, run: str, path: str, text: str) -> str:
    """A person's edit of `path`, committed with a message that carries the trailers of
    the real run `run` (pasted from a dream commit, or forged); its commit id."""
    write(root, path, text)
    git(root, "add", "-A")
    git(
        root,
        "commit",
        "-q",
        "-m",
        f"a person's edit\n\nGitdream-Run: {run}\nGitdream-Kind: experience\nGitdream-Agent: ops\n",
    )
    return git(root, "rev-parse", "HEAD").strip()


def test_a_real_run_id_in_a_persons_trailers_does_not_make_the_commit_a_dream(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Whether a commit is a run's comes from the run's receipt, which lists its commits,
    not from trailers anyone can copy. Before, a person's commit carrying a real run's id
    was that run's: the conflict hint of a revert told the person to `gitdream revert`
    the run (their own commit), and a run whose receipt lists no commit (a no-op) had the
    person's commit reverted as its own."""
    root, _ = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    first = run_gitdream(root, "run", "--json")
    assert first.returncode == 0, first.stderr
    (dream,) = json.loads(first.stdout)["runs"]
    noop = run_gitdream(root, "run", "--json")
    (idle,) = json.loads(noop.stdout)["runs"]
    assert idle["status"] == "noop" and not any(idle["commits"].values()), idle
    # 1. a person's commit with the dream's own run id, over a file the dream wrote
    topic = f"{MEMORY}/deploy.md"
    edit = (root / topic).read_text() + "\nA person's note.\n"
    person = _person_commits_with_trailers_of(root, dream["run"], topic, edit)
    done = run_gitdream(root, "revert", dream["run"])
    assert done.returncode == 1 and "later changes conflict" in done.stderr, done.stderr
    assert f"git revert {person[:7]}" in done.stderr and "which is not a dream" in done.stderr, done.stderr
    assert f"revert the later run first (`gitdream revert {dream['run']}`)" not in done.stderr
    # 2. a person's commit with the no-op run's id: that run made no commit
    edited = "---\nname: human\ndescription: written by a person\ntype: note\n---\n\nEdited.\n"
    before = _person_commits_with_trailers_of(root, idle["run"], f"{MEMORY}/human.md", edited)
    done = run_gitdream(root, "revert", idle["run"])
    assert done.returncode == 1 and "nothing to revert" in done.stderr, done.stderr
    assert git(root, "rev-parse", "HEAD").strip() == before
    assert (root / MEMORY / "human.md").read_text() == edited
    listed = json.loads(run_gitdream(root, "log", "--all", "--json").stdout)
    shown = next(r for r in listed["runs"] if r["run"] == idle["run"])
    assert not any(shown["commits"].values()), shown


def test_a_run_saves_its_state_a_bounded_number_of_times() -> None:
    """10 000 agents rewrote state.json (which lists them all) after each agent: the saves
    are now at most one per second, and one at the end."""
    from gitdream.commands.run import _Saver

    saves: list[int] = []
    saver = _Saver(lambda: saves.append(1))
    for _agent in range(10_000):
        saver()
    saver.flush()
    assert 1 <= len(saves) <= 3


def test_a_slow_save_of_the_state_takes_at_most_a_tenth_of_the_run() -> None:
    """At 10 000 agents one save of state.json takes about half a second: saving once a
    second spent a third of the run saving. The wait after a save grows with its cost."""
    from gitdream.commands.run import _Saver

    now = [0.0]
    saves: list[float] = []

    def save() -> None:  # a save that takes 0.5 s of the (simulated) clock
        saves.append(now[0])
        now[0] += 0.5

    saver = _Saver(save, clock=lambda: now[0])
    for _agent in range(10_000):  # 10 ms of work per agent: 100 s, plus the saves
        now[0] += 0.01
        saver()
    saver.flush()
    saving = 0.5 * len(saves)
    assert saving <= 0.1 * (now[0] - saving) + 0.5, (len(saves), now[0])
    assert len(saves) >= 10, "the state is still saved along the way"


def test_a_saved_state_never_reuses_the_bytes_of_a_changed_entry(tmp_path: Path) -> None:
    """A save re-encodes only the agents whose values changed since the last save: an
    entry changed in place (as the gates do), an agent added or removed, all reach the
    file; what `load` reads back is what was saved."""
    from gitdream import clock
    from gitdream.trigger import state as state_mod

    state = state_mod.State()
    for n in range(3):
        state_mod.record_run(state, f"a{n}", f"run{n}", "ok", clock.now())
    state_mod.save(tmp_path, state)
    state.agents["a1"].last_scan_key = "head:watermark"  # in place, as gates.evaluate does
    state.agents["a1"].failures = 2
    del state.agents["a2"]
    state_mod.record_run(state, "a3", "run3", "failed", clock.now())
    state_mod.save(tmp_path, state)
    assert state_mod.load(tmp_path).agents == state.agents
    state.agents["a2"] = state_mod.AgentState(last_status="noop")  # back again, new values
    state_mod.save(tmp_path, state)
    assert state_mod.load(tmp_path).agents == state.agents


def test_a_run_killed_between_agents_leaves_state_the_next_run_and_status_read(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Saved along the way (not only at the end): a SIGKILL before the second agent's
    commit leaves state.json complete, recording the first agent's run; `status` shows it,
    and the next run dreams the second agent and records both."""
    import json

    from tests.reliability.support import killed
    from tests.reliability.test_robustness import _two_agents

    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": "before-experience-commit@2:kill"})
    assert killed(proc), proc.stderr
    saved = json.loads((root / ".git" / "gitdream" / "state.json").read_text())["agents"]
    assert saved["ops"]["last_status"] == "ok" and "two" not in saved
    shown = run_gitdream(root, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    runs = {a["id"]: a["last_run"] for a in json.loads(shown.stdout)["agents"]}
    assert runs["ops"]["status"] == "ok" and runs["ops"]["run"] == saved["ops"]["last_run"]
    assert runs["two"]["status"] is None
    again = run_gitdream(root, "run", "--json")
    assert again.returncode == 0, again.stderr
    statuses = {r["agent"]: r["status"] for r in json.loads(again.stdout)["runs"]}
    assert statuses == {"ops": "noop", "two": "ok"}
    saved = json.loads((root / ".git" / "gitdream" / "state.json").read_text())["agents"]
    assert saved["ops"]["last_dream"] is not None and saved["two"]["last_status"] == "ok"


def test_receipts_of_many_runs_are_fanned_out_as_git_does(tmp_path: Path) -> None:
    """libgit2 wrote every note at the root of the notes tree, so each receipt rewrote a
    tree of all receipts (10 000 agents: O(agents²)). Past FANOUT_AT notes, new ones go
    into `ab/cdef…` folders as `git notes` writes them; git and gitdream read every one,
    an appended line lands in the note where it already is, and fsck is clean."""
    from gitdream.git import notes
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo

    root = agent_repo(tmp_path / "repo")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    commits = [
        git(root, "commit-tree", tree, "-p", "HEAD", "-m", f"c{n}").strip()
        for n in range(256 + 40)  # git fans out past 256
    ]
    git(root, "update-ref", "refs/heads/many", commits[-1])  # keep them reachable
    repo = Repo.open(root, env={})
    ident = Identity(("gitdream", "gitdream@example.invalid"), ("gitdream", "gitdream@example.invalid"))
    for n, commit in enumerate(commits):
        notes.append_line(repo, "refs/notes/gitdream", commit, f'{{"n": {n}}}', ident)
    notes.append_line(repo, "refs/notes/gitdream", commits[-1], '{"n": "again"}', ident)
    top = git(root, "ls-tree", "refs/notes/gitdream").splitlines()
    assert len(top) <= 256 + 256, len(top)
    assert any(line.split()[1] == "tree" for line in top), "no fan-out folder"
    listed = git(root, "notes", "--ref", "gitdream", "list").split()
    assert len(listed) // 2 == len(commits)
    assert git(root, "notes", "--ref", "gitdream", "show", commits[-1]) == '{"n": 295}\n{"n": "again"}\n'
    assert dict(notes.iter_notes(repo, "refs/notes/gitdream"))[commits[0]] == '{"n": 0}\n'
    assert git(root, "fsck", "--strict", "--no-dangling") == ""


def test_a_line_appended_to_a_note_git_fanned_out_deeper_lands_where_it_is(tmp_path: Path) -> None:
    """A notes ref of more than 65 536 notes, as git lays it out (`ab/cd/ef…`, fetched from
    someone else): a line appended to a note there replaces that note in place — git reads
    one note, with both lines — now that gitdream builds every notes tree itself (libgit2's
    `create_note` moved the ref without gitdream's lock record: test_kill.py)."""
    from gitdream.git import notes
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo

    root = agent_repo(tmp_path / "repo")
    ident = Identity(("gitdream", "gitdream@example.invalid"), ("gitdream", "gitdream@example.invalid"))
    repo = Repo.open(root, env={})
    tip = git(root, "rev-parse", "HEAD").strip()
    other = git(root, "commit-tree", git(root, "rev-parse", "HEAD^{tree}").strip(), "-m", "other").strip()
    git(root, "update-ref", "refs/heads/other", other)
    for commit in (tip, other):
        notes.append_line(repo, "refs/notes/gitdream", commit, '{"n": 1}', ident)
    deep_notes(root)
    notes.append_line(Repo.open(root, env={}), "refs/notes/gitdream", tip, '{"n": 2}', ident)
    paths = git(root, "ls-tree", "-r", "--name-only", "refs/notes/gitdream").split()
    assert sorted(paths) == sorted(f"{c[:2]}/{c[2:4]}/{c[4:]}" for c in (tip, other)), paths
    assert git(root, "notes", "--ref", "gitdream", "show", tip) == '{"n": 1}\n{"n": 2}\n'
    assert git(root, "notes", "--ref", "gitdream", "show", other) == '{"n": 1}\n'
    assert git(root, "fsck", "--strict") == ""
