"""Receipt notes written into notes trees of odd shapes (issue 16): `refs/notes/gitdream`
is fetched from other people, so its tree may hold what gitdream itself never writes — a
note too large to read, entries that are not notes (a link, a gitlink, a folder under a
note's name, a file where git expects a fan-out folder), one note at two fan-out depths.
Whatever the shape, an append loses no note and no other entry, git and gitdream read
the same note, and `git fsck --strict` stays clean."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitdream.errors import GitdreamError
from tests.helpers import commit_all, git, run_gitdream, write
from tests.reliability.support import LOGS, agent_repo, fsck, material, mktree

REF = "refs/notes/gitdream"


def _ident():  # type: ignore[no-untyped-def]
    from gitdream.git.commitbuilder import Identity

    return Identity(("gitdream", "gitdream@example.invalid"), ("gitdream", "gitdream@example.invalid"))


def _commits(root: Path, count: int) -> list[str]:
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    made = [git(root, "commit-tree", tree, "-p", "HEAD", "-m", f"c{n}").strip() for n in range(count)]
    for n, commit in enumerate(made):
        git(root, "update-ref", f"refs/heads/c{n}", commit)  # keep them reachable
    return made


def _blob(root: Path, text: str) -> str:
    return subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=root,
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _set_notes_tree(root: Path, lines: str) -> None:
    tree = mktree(root, lines)
    parent = ["-p", REF] if git(root, "rev-parse", "-q", "--verify", REF, check=False).strip() else []
    tip = git(root, "commit-tree", tree, *parent, "-m", "Notes shaped by someone else").strip()
    git(root, "update-ref", REF, tip)


def _listed(root: Path) -> dict[str, str]:
    """annotated object → note blob, as git lists them."""
    words = git(root, "notes", "--ref", "gitdream", "list").split()
    return dict(zip(words[1::2], words[::2], strict=True))


def _objects(root: Path, rev: str = REF) -> set[str]:
    return {line.split()[2] for line in git(root, "ls-tree", "-r", rev).splitlines()}


def test_entries_that_are_not_notes_are_kept_and_never_read_as_notes(tmp_path: Path) -> None:
    """Regression test: a fetched notes tree of 300 flat notes with a link and a gitlink
    under commit ids, a folder under one, and a file named as a fan-out folder. Before,
    a receipt on the folder's commit replaced the folder, one past 256 notes replaced the
    file by its folder, and `gitdream log` failed on the gitlink ("an object this dream
    needs is missing") as libgit2's notes iterator read it — and made up ids for the file.
    Now each note goes where it takes nothing's place and every entry is kept."""
    from gitdream.git import notes
    from gitdream.git.repo import Repo

    root = agent_repo(tmp_path / "repo")
    distinct: dict[str, str] = {}  # four commits of four fan-out folders: none shares another's places
    for commit in _commits(root, 24):
        distinct.setdefault(commit[:2], commit)
    linked, gitlinked, foldered, fanned = list(distinct.values())[:4]
    text = _blob(root, "not a note\n")
    folder = mktree(root, f"100644 blob {text}\tinside\n")
    lines = "".join(
        f"100644 blob {_blob(root, f'note {n}')}\t{_blob(root, f'object {n}')}\n" for n in range(300)
    )
    lines += (
        f"120000 blob {text}\t{linked}\n"
        f"160000 commit {gitlinked}\t{gitlinked}\n"
        f"040000 tree {folder}\t{foldered}\n"
        f"100644 blob {text}\t{fanned[:2]}\n"
    )
    _set_notes_tree(root, lines)
    before, kept = _listed(root), _objects(root)
    assert len(before) == 300
    repo = Repo.open(root, env={})
    assert sorted(dict(notes.iter_notes(repo, REF))) == sorted(before), "only git's notes are notes"
    for commit in (linked, gitlinked, foldered, fanned):
        notes.append_line(repo, REF, commit, '{"n": 1}', _ident())
        assert git(root, "notes", "--ref", "gitdream", "show", commit) == '{"n": 1}\n'
        assert notes.read(repo, REF, commit) == '{"n": 1}\n'
    after = _listed(root)
    assert {k: v for k, v in after.items() if k in before} == before, "no note lost or changed"
    assert kept <= _objects(root), "an entry that is not a note was dropped"
    assert len(dict(notes.iter_notes(repo, REF))) == 304
    assert fsck(root) == ""


def test_a_note_at_two_fan_out_depths_is_read_and_appended_as_one(tmp_path: Path) -> None:
    """Regression test: one note at the root and in its fan-out folder (a notes tree
    merged or fanned out by hand; git reads both, joined). The receipt was appended to the
    root copy while libgit2 read the other: the run's receipt was never read back (`log`
    said "no receipt here"). Now the copies are read as one, and written back as one."""
    root = agent_repo(tmp_path / "repo")
    material(root)
    commit = git(root, "rev-parse", "HEAD").strip()
    flat, deep = _blob(root, '{"copy": "flat"}\n'), _blob(root, '{"copy": "deep"}\n')
    _set_notes_tree(root, f"100644 blob {flat}\t{commit}\n100644 blob {deep}\t{commit[:2]}/{commit[2:]}\n")
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 0, done.stderr
    logged = run_gitdream(root, "log", "--json")
    assert logged.returncode == 0, logged.stderr
    runs = json.loads(logged.stdout)
    runs = runs.get("runs", runs) if isinstance(runs, dict) else runs
    assert runs[0]["status"] == "ok", runs[0]
    paths = [
        p for p in git(root, "ls-tree", "-r", "--name-only", REF).split() if p.replace("/", "") == commit
    ]
    assert len(paths) == 1, paths
    shown = git(root, "notes", "--ref", "gitdream", "show", commit)
    assert '{"copy": "flat"}' in shown and '{"copy": "deep"}' in shown and '"status":"ok"' in shown
    assert fsck(root) == ""


def test_a_note_whose_places_are_both_taken_refuses_with_nothing_written(tmp_path: Path) -> None:
    """A folder under the commit's id and a file named as its fan-out folder: no place is
    left for the note but one taken; the append refuses, naming both, and the notes ref
    does not move."""
    from gitdream.git import notes
    from gitdream.git.repo import Repo

    root = agent_repo(tmp_path / "repo")
    (commit,) = _commits(root, 1)
    text = _blob(root, "not a note\n")
    folder = mktree(root, f"100644 blob {text}\tinside\n")
    _set_notes_tree(root, f"040000 tree {folder}\t{commit}\n100644 blob {text}\t{commit[:2]}\n")
    tip = git(root, "rev-parse", REF).strip()
    with pytest.raises(GitdreamError, match="are both taken"):
        notes.append_line(Repo.open(root, env={}), REF, commit, '{"n": 1}', _ident())
    assert git(root, "rev-parse", REF).strip() == tip


def test_a_note_too_large_to_read_is_kept_and_the_receipt_refused(tmp_path: Path) -> None:
    """Regression test: a note larger than notes.MAX_NOTE_BYTES on the input commit (a
    fetched one: 33 MB) is read as absent, and the run's receipt replaced it — the 33 MB
    were gone. Now the receipt is refused with a warning naming the note, which stays."""
    from gitdream.git import notes

    root = agent_repo(tmp_path / "repo")
    material(root)
    write(root, f"{LOGS}/2026-03-05.md", "- [deploy] Canary first.\n")
    commit_all(root, "log")
    commit = git(root, "rev-parse", "HEAD").strip()
    big = tmp_path / "big.txt"
    big.write_text('{"someone": "else"}\n' + "x" * (notes.MAX_NOTE_BYTES + 10) + "\n")
    git(root, "notes", "--ref", "gitdream", "add", "-F", str(big), commit)
    blob = _listed(root)[commit]
    done = run_gitdream(root, "run")
    assert "could not write the receipt" in done.stderr and "the note was kept" in done.stderr, done.stderr
    assert f"git notes --ref gitdream show {commit}" in done.stderr
    assert _listed(root)[commit] == blob
    assert fsck(root) == ""
