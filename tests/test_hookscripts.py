"""`gitdream hooks install|uninstall|status` as files: where, chaining, idempotence,
exact restore, refusals. Real git for the hooks itself is in test_hooks_git.py."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream.errors import HookInstallError
from gitdream.git.repo import Repo
from gitdream.trigger import hookscripts
from gitdream.trigger.hookscripts import HOOK_NAMES, PREV_SUFFIX
from tests.helpers import PACKAGE_ROOT, cli, commit_all, git, write

FOREIGN = b"#!/bin/sh\n# someone else's hook \xff\xfe (not UTF-8)\nexit 0\n"


def tree(directory: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under `directory`, recursively: kind, bytes (or link target), mode."""
    out: dict[str, tuple[str, bytes | str, int]] = {}
    if not directory.exists():
        return out
    for path in sorted(directory.rglob("*")):
        info = path.lstat()
        name = path.relative_to(directory).as_posix()
        if path.is_symlink():
            out[name] = ("link", os.readlink(path), info.st_mode)
        elif path.is_dir():
            out[name] = ("dir", "", info.st_mode)
        else:
            out[name] = ("file", path.read_bytes(), info.st_mode)
    return out


def install(root: Path, **kwargs: object) -> hookscripts.HooksResult:
    return hookscripts.install(Repo.open(root), python=sys.executable, **kwargs)  # type: ignore[arg-type]


def uninstall(root: Path, **kwargs: object) -> hookscripts.HooksResult:
    return hookscripts.uninstall(Repo.open(root), **kwargs)  # type: ignore[arg-type]


def test_install_writes_executable_hooks_with_marker_and_baked_values(git_repo: Path) -> None:
    hooks = git_repo / ".git" / "hooks"
    assert not hooks.exists()
    result = install(git_repo)
    assert [(h.name, h.action) for h in result.hooks] == [(n, "installed") for n in HOOK_NAMES]
    for name in HOOK_NAMES:
        path = hooks / name
        data = path.read_text(encoding="utf-8")
        assert hookscripts.HOOK_ID in data
        assert f"GITDREAM_PYTHON={shlex.quote(sys.executable)}\n" in data
        assert f"GITDREAM_HOOK={name}\n" in data
        assert path.stat().st_mode & 0o777 == 0o755
    assert "created the hooks directory" in result.warnings[0]


def test_baked_values_are_shell_quoted(git_repo: Path) -> None:
    script = hookscripts.render("post-merge", "/opt/it's here/python")
    assert b"GITDREAM_PYTHON='/opt/it'\"'\"'s here/python'\n" in script
    with pytest.raises(HookInstallError):
        hookscripts.render("post-merge", "/opt/new\nline/python")


def test_second_install_changes_nothing(git_repo: Path) -> None:
    install(git_repo)
    hooks = git_repo / ".git" / "hooks"
    before = tree(hooks)
    mtimes = {p.name: p.stat().st_mtime_ns for p in hooks.iterdir()}
    result = install(git_repo)
    assert not result.changed
    assert [h.action for h in result.hooks] == ["unchanged"] * 4
    assert tree(hooks) == before
    assert {p.name: p.stat().st_mtime_ns for p in hooks.iterdir()} == mtimes


def test_install_rewrites_only_its_own_outdated_file(git_repo: Path) -> None:
    install(git_repo)
    path = git_repo / ".git/hooks/post-merge"
    path.write_bytes(path.read_bytes().replace(b"set -u", b"set -u # edited"))
    result = install(git_repo)
    assert [h.action for h in result.hooks] == ["unchanged", "updated", "unchanged", "unchanged"]
    assert not (git_repo / ".git/hooks" / ("post-merge" + PREV_SUFFIX)).exists()


def test_uninstall_restores_byte_for_byte_and_removes_created_dir(git_repo: Path) -> None:
    before = tree(git_repo / ".git")
    install(git_repo)
    result = uninstall(git_repo)
    assert [h.action for h in result.hooks] == ["removed"] * 4
    assert tree(git_repo / ".git") == before
    assert not (git_repo / ".git/hooks").exists()


def test_existing_hook_is_chained_and_restored(git_repo: Path) -> None:
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_bytes(FOREIGN)
    os.chmod(hooks / "pre-commit", 0o700)
    (hooks / "pre-commit.sample").write_bytes(b"sample\n")
    before = tree(hooks)
    result = install(git_repo)
    assert (result.hooks[0].action, result.hooks[0].previous) == (
        "chained",
        hooks / "pre-commit.gitdream-prev",
    )
    assert (hooks / "pre-commit.gitdream-prev").read_bytes() == FOREIGN
    assert hookscripts.is_ours(hooks / "pre-commit")
    assert not result.warnings  # the directory existed
    install(git_repo)  # idempotent: never moves its own hook aside
    assert (hooks / "pre-commit.gitdream-prev").read_bytes() == FOREIGN
    result = uninstall(git_repo)
    assert result.hooks[0].action == "restored"
    assert tree(hooks) == before


def test_dead_symlink_counts_as_a_hook(git_repo: Path) -> None:
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    (hooks / "post-merge").symlink_to("/nonexistent/hook")
    before = tree(hooks)
    install(git_repo)
    assert os.readlink(hooks / "post-merge.gitdream-prev") == "/nonexistent/hook"
    uninstall(git_repo)
    assert tree(hooks) == before


def test_symlink_to_a_gitdream_script_is_not_ours(git_repo: Path) -> None:
    """Overwriting through a symlink could rewrite gitdream's own shipped template."""
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    template = PACKAGE_ROOT / "hooks" / "post-merge"
    copy = git_repo / "shipped-post-merge"
    shutil.copyfile(template, copy)
    (hooks / "post-merge").symlink_to(copy)
    original = copy.read_bytes()
    result = install(git_repo)
    assert result.hooks[1].action == "chained"
    assert copy.read_bytes() == original
    assert (hooks / "post-merge.gitdream-prev").is_symlink()


def test_foreign_hook_next_to_an_older_saved_hook_is_refused(git_repo: Path) -> None:
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    (hooks / "post-merge").write_bytes(b"#!/bin/sh\necho new\n")
    (hooks / "post-merge.gitdream-prev").write_bytes(b"#!/bin/sh\necho old\n")
    before = tree(hooks)
    with pytest.raises(HookInstallError, match="will not overwrite either"):
        install(git_repo)
    assert tree(hooks) == before  # nothing written, not even the other hooks


def test_foreign_hook_equal_to_saved_hook_is_replaced(git_repo: Path) -> None:
    """Husky rewrites its stubs on `npm install`: the stub it put back equals the saved one."""
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    (hooks / "post-merge").write_bytes(b"#!/bin/sh\necho stub\n")
    install(git_repo)
    (hooks / "post-merge").write_bytes(b"#!/bin/sh\necho stub\n")  # the manager put its stub back
    result = install(git_repo)
    assert result.hooks[1].action == "chained"
    assert hookscripts.is_ours(hooks / "post-merge")


def test_uninstall_leaves_foreign_hooks_and_does_not_blow_up(git_repo: Path) -> None:
    result = uninstall(git_repo)
    assert [h.action for h in result.hooks] == ["missing"] * 4
    hooks = git_repo / ".git/hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_bytes(FOREIGN)
    result = uninstall(git_repo)
    assert result.hooks[0].action == "foreign"
    assert (hooks / "pre-commit").read_bytes() == FOREIGN


def test_core_hookspath_inside_repository(git_repo: Path) -> None:
    git(git_repo, "config", "core.hooksPath", ".githooks")
    write(git_repo, ".gitignore", ".githooks/\n")
    result = install(git_repo)
    assert result.hooks_dir.path == git_repo / ".githooks"
    assert result.hooks_dir.source == "core.hooksPath"
    assert (git_repo / ".githooks" / "pre-commit").is_file()
    assert not (git_repo / ".git" / "hooks").exists()
    assert not [w for w in result.warnings if "not ignored" in w]
    uninstall(git_repo)
    assert not (git_repo / ".githooks").exists()


def test_hooks_in_worktree_not_ignored_get_a_warning(git_repo: Path) -> None:
    git(git_repo, "config", "core.hooksPath", "githooks")
    result = install(git_repo, hooks=["pre-commit"])
    assert any("not ignored" in w for w in result.warnings)


def test_tracked_hook_is_never_moved(git_repo: Path) -> None:
    write(git_repo, ".githooks/pre-commit", "#!/bin/sh\nexit 0\n")
    commit_all(git_repo, "team hooks")
    git(git_repo, "config", "core.hooksPath", ".githooks")
    before = tree(git_repo / ".githooks")
    with pytest.raises(HookInstallError, match="tracked by git"):
        install(git_repo)
    assert tree(git_repo / ".githooks") == before
    # `hooks status` does not suggest the install that refuses: it names the line to add.
    found = {h.name: h for h in hookscripts.status(Repo.open(git_repo)).hooks}
    assert found["pre-commit"].status == "foreign-tracked"
    assert 'exec gitdream hook pre-commit "$@"' in hookscripts.describe_status(
        "foreign-tracked", "pre-commit"
    )
    assert install(git_repo, hooks=["post-merge"]).hooks[0].action == "installed"


def test_hooks_dir_outside_repository_needs_allow_outside(git_repo: Path, tmp_path: Path) -> None:
    shared = tmp_path / "global-hooks"
    git(git_repo, "config", "core.hooksPath", str(shared))
    with pytest.raises(HookInstallError) as info:
        install(git_repo)
    assert "outside this repository" in info.value.message
    assert "--allow-outside" in (info.value.hint or "")
    assert not shared.exists()
    result = install(git_repo, allow_outside=True)
    assert (shared / "post-merge").is_file()
    assert not result.hooks_dir.inside
    with pytest.raises(HookInstallError):
        uninstall(git_repo)
    uninstall(git_repo, allow_outside=True)
    assert not shared.exists()


def test_linked_worktree_installs_into_the_common_dir(git_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(git_repo, "worktree", "add", "-q", str(worktree), "-b", "side")
    result = install(worktree)
    assert result.hooks_dir.path == git_repo / ".git" / "hooks"
    assert result.hooks_dir.inside
    assert not install(git_repo).changed
    uninstall(worktree)
    assert not (git_repo / ".git" / "hooks").exists()


def test_status_reports_each_state(git_repo: Path, tmp_path: Path) -> None:
    repo = Repo.open(git_repo)
    assert [h.status for h in hookscripts.status(repo).hooks] == ["missing"] * 4
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    hookscripts.install(repo, python=str(python))
    hooks = git_repo / ".git/hooks"
    assert hookscripts.status(repo).installed
    (hooks / "post-merge").write_bytes((hooks / "post-merge").read_bytes() + b"# edited\n")
    os.chmod(hooks / "post-rewrite", 0o644)
    (hooks / "post-commit").unlink()
    (hooks / "post-commit").write_bytes(FOREIGN)
    states = {h.name: h.status for h in hookscripts.status(repo).hooks}
    assert states == {
        "pre-commit": "installed",
        "post-merge": "outdated",
        "post-rewrite": "not-executable",
        "post-commit": "foreign",
    }
    python.unlink()
    assert hookscripts.status(repo).hooks[0].status == "broken"


def test_pre_commit_framework_chaining_ours_as_legacy(git_repo: Path) -> None:
    """pre-commit install after ours renames ours to pre-commit.legacy and runs it."""
    hooks = git_repo / ".git/hooks"
    install(git_repo)
    os.replace(hooks / "pre-commit", hooks / "pre-commit.legacy")
    (hooks / "pre-commit").write_bytes(b"#!/usr/bin/env bash\n# File generated by pre-commit\n")
    repo = Repo.open(git_repo)
    assert hookscripts.status(repo).hooks[0].status == "chained-by-other"
    assert install(git_repo).hooks[0].action == "unchanged"
    result = uninstall(git_repo)
    assert result.hooks[0].action == "removed"
    assert not (hooks / "pre-commit.legacy").exists()
    assert (hooks / "pre-commit").read_bytes().startswith(b"#!/usr/bin/env bash")


def test_cli_install_json_and_refusal(git_repo: Path, tmp_path: Path) -> None:
    result = cli(git_repo, "hooks", "install", "--json", "--hook", "pre-commit", "--python", "/p/python")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["hooks_dir"] == {
        "path": str(git_repo / ".git" / "hooks"),
        "source": "default",
        "inside_repository": True,
        "in_worktree": False,
    }
    assert document["changed"] is True
    assert document["hooks"] == [
        {
            "name": "pre-commit",
            "path": str(git_repo / ".git/hooks/pre-commit"),
            "action": "installed",
            "previous": None,
            "note": "",
        }
    ]
    status = json.loads(cli(git_repo, "hooks", "status", "--json").stdout)
    assert [h["status"] for h in status["hooks"]] == ["broken", "missing", "missing", "missing"]
    git(git_repo, "config", "core.hooksPath", str(tmp_path / "shared"))
    refused = cli(git_repo, "hooks", "install")
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: the hooks directory")
    assert "\nhint: pass --allow-outside" in refused.stderr


def test_templates_share_their_common_functions() -> None:
    """pre-commit and post-merge are separate files; their shared functions must not drift."""
    root = PACKAGE_ROOT / "hooks"

    def part(text: str, start: str, end: str) -> str:
        begin = text.index(start)
        return text[begin : text.index(end, begin)]

    pre = (root / "pre-commit").read_text()
    post = (root / "post-merge").read_text()
    for start, end in (("run_prev() {", "\n}\n"), ("toml_enabled() {", "\n}\n"), ("disabled() {", "\n}\n")):
        assert part(pre, start, end) == part(post, start, end)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_hook_templates_are_shellcheck_clean() -> None:
    scripts = [str(PACKAGE_ROOT / "hooks" / n) for n in ("pre-commit", "post-merge")]
    proc = subprocess.run(["shellcheck", "-s", "sh", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_hook_templates_are_executable_posix_sh() -> None:
    for name in ("pre-commit", "post-merge"):
        path = PACKAGE_ROOT / "hooks" / name
        assert path.read_text().startswith("#!/bin/sh\n")
        assert path.stat().st_mode & stat.S_IXUSR
        if shutil.which("dash"):
            assert subprocess.run(["dash", "-n", str(path)]).returncode == 0


def test_a_hook_that_is_not_installed_has_one_name_everywhere(git_repo: Path) -> None:
    """The new user's item 10: `missing` in the docs and `hooks status --json`, but `not
    installed` in `hooks status` and `not-installed` in `hooks uninstall`."""
    texts = [
        cli(git_repo, "hooks", "status").stdout,
        cli(git_repo, "hooks", "uninstall").stdout,
        cli(git_repo, "status").stdout,
    ]
    documents = [
        json.loads(cli(git_repo, "hooks", "status", "--json").stdout)["hooks"],
        json.loads(cli(git_repo, "hooks", "uninstall", "--json").stdout)["hooks"],
    ]
    assert {hook.get("status", hook.get("action")) for hook in documents[0] + documents[1]} == {"missing"}
    for text in texts:
        assert "missing" in text and "not installed" not in text and "not-installed" not in text, text
