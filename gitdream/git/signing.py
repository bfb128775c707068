"""Commit signing, as `git commit` does it when `commit.gpgsign` is true.

libgit2 neither signs nor refuses, so a library commit would silently be unsigned
(DESIGN §6). gitdream signs the commit buffer with the program git would use
(`gpg.format` openpgp: `gpg.openpgp.program`/`gpg.program`, default `gpg`; ssh:
`gpg.ssh.program`, default `ssh-keygen`) and key (`user.signingkey`, for ssh else the
first key `gpg.ssh.defaultKeyCommand` prints), following git's gpg-interface.c, or
raises SigningError: never an unsigned commit when signing is on. Every one of these
settings is read as git reads it (`Repo.git_config`: `GIT_CONFIG_GLOBAL`, `git -c`,
`GIT_CONFIG_COUNT`, includes), so gitdream signs exactly when `git commit` would.
`gpg.format = x509` and ssh signing without a key are refused.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from gitdream.errors import SigningError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

_HINT = (
    "fix the signing setup (does `git commit -S` work here?), or turn signing off for this "
    "repository with `git config commit.gpgsign false`"
)


def signing_enabled(repo: Repo) -> bool:
    """True when `commit.gpgsign` is true for this repository, as git reads it."""
    return repo.git_config().get_bool("commit.gpgsign", False)


def sign(repo: Repo, payload: str, committer_ident: str) -> str:
    """Return an ASCII-armoured detached signature of `payload` (the commit buffer).

    Raises SigningError with the program's error output when signing fails.
    """
    config = repo.git_config()
    fmt = (config.get("gpg.format") or "openpgp").lower()
    key = config.get("user.signingkey")
    if fmt == "openpgp":
        program = config.get("gpg.openpgp.program") or config.get("gpg.program") or "gpg"
        return _sign_openpgp(program, key or committer_ident, payload)
    if fmt == "ssh":
        program = config.get("gpg.ssh.program") or "ssh-keygen"
        key = key or _default_ssh_key(config.get("gpg.ssh.defaultKeyCommand"))
        if not key:
            raise SigningError(
                "commit.gpgsign is true with gpg.format=ssh, but user.signingkey is not set",
                hint="set user.signingkey to your SSH key file, or " + _HINT.split(", or ")[1],
            )
        return _sign_ssh(program, key, payload)
    raise SigningError(
        f"commit.gpgsign is true with gpg.format={fmt}, which gitdream cannot sign with",
        hint="use gpg.format openpgp or ssh for this repository, or " + _HINT.split(", or ")[1],
    )


def _default_ssh_key(command: str | None) -> str | None:
    """git: without user.signingkey, ssh signing uses the first line of the output of
    `gpg.ssh.defaultKeyCommand` (run by the shell) that is a literal key."""
    if not command:
        return None
    proc = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(("key::", "ssh-")):
            return line.strip()
    return None


def _run(cmd: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(cmd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise SigningError(
            f"commit.gpgsign is true, but the signing program {cmd[0]!r} was not found", hint=_HINT
        ) from None


def _sign_openpgp(program: str, key: str, payload: str) -> str:
    # git: gpg --status-fd=2 -bsau <key>; success is the SIG_CREATED status line.
    proc = _run([program, "--status-fd=2", "-bsau", key], payload.encode("utf-8"))
    if proc.returncode != 0 or b"\n[GNUPG:] SIG_CREATED " not in b"\n" + proc.stderr:
        raise SigningError(
            f"commit.gpgsign is true, but {program} could not sign with key {key!r}: " + _tail(proc.stderr),
            hint=_HINT,
        )
    return proc.stdout.decode("utf-8")


def _sign_ssh(program: str, key: str, payload: str) -> str:
    # git: ssh-keygen -Y sign -n git -f <keyfile> [-U] <buffer file>; a literal key
    # ("key::..." or "ssh-...") is written to a temporary file and used from the agent (-U).
    with tempfile.TemporaryDirectory(prefix="gitdream-sign-") as tmp:
        literal = key.startswith(("key::", "ssh-"))
        if literal:
            keyfile = Path(tmp) / "key.pub"
            keyfile.write_text(key.removeprefix("key::") + "\n")
        else:
            keyfile = Path(os.path.expanduser(key))
        buffer = Path(tmp) / "buffer"
        buffer.write_bytes(payload.encode("utf-8"))
        cmd = [program, "-Y", "sign", "-n", "git", "-f", str(keyfile)]
        if literal:
            cmd.append("-U")
        cmd.append(str(buffer))
        proc = _run(cmd, b"")
        sig = buffer.with_name("buffer.sig")
        if proc.returncode != 0 or not sig.exists():
            raise SigningError(
                f"commit.gpgsign is true, but {program} could not sign with {key}: " + _tail(proc.stderr),
                hint=_HINT,
            )
        return sig.read_text(encoding="utf-8")


def _tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip().splitlines()
    return text[-1] if text else "no error output"
