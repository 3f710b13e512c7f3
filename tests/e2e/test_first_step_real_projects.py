"""A first step on real published projects needs no ``stepkit.toml`` edit:
``stepkit init`` → a plan step → ``stepkit run`` with a command coder that
changes the code and adds a test → ``stepkit resume --answer approve`` →
STEP_COMPLETE, with the gates ``init`` proved.

pluggy 1.5.0 from its PyPI sdist, set up as its docs say (a ``.env``
virtualenv, ``pip install -e '.[dev]'``; its tests gate is ``tox -e pyXY``),
and @fastify/error 4.3.0 from the npm registry (its tarball ships its
``node --test`` suite), installed with a pinned pnpm: the tarball declares no
``packageManager``, so pnpm does not switch itself to another version.  Both
archives are hash-pinned.  The tests skip, with why, where the registry is
unreachable or a tool cannot be installed."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest
import yaml

from tests.support import cli
from tests.support.gitrepo import git

PNPM = "pnpm@12.26.0"
PLUGGY_SHA256 = "2cffa88e94fdc978c4c574f15f9e59b7f4201d439195c3715ca9e2486f1d0cf1"
FASTIFY_ERROR_SHA1 = "7bb7148a82edf76e4a62e9d595b808764859a7a2"


def _setup(args: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> None:
    """Run a set-up command; skip the test, with its output's tail, when it fails."""
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot {what}: {(done.stderr or done.stdout)[-400:]}")


def _unpack(archive: Path, digest: str, algorithm: str, into: Path) -> Path:
    """``archive`` unpacked into ``into`` (its single top directory dropped), after its hash is checked."""
    assert hashlib.new(algorithm, archive.read_bytes()).hexdigest() == digest, archive
    with tarfile.open(archive) as tar:
        tar.extractall(into.parent / "unpacked", filter="data")
    (top,) = (into.parent / "unpacked").iterdir()
    top.rename(into)
    return into


def stepkit(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return cli.stepkit(*args, cwd=cwd, env=env, timeout=600)


def first_step(project: Path, env: dict[str, str], plan: str, coder: str, answers: dict) -> str:
    """``stepkit init``, the plan's first step written, a run paused at the
    approval, approved: the final stdout.  ``stepkit.toml`` is never edited."""
    done = stepkit("init", cwd=project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    written = (project / "stepkit.toml").read_text()
    (project / "plans" / "steps" / "01-first-step.md").unlink()
    (project / "plans" / "steps" / "01-the-step.md").write_text(plan)
    drive = project.parent / "drive"
    drive.mkdir()
    (drive / "coder.sh").write_text(coder)
    (drive / "answers.yaml").write_text(yaml.safe_dump(answers))
    git(project, "add", "-A")
    git(project, "commit", "-qm", "stepkit init and the first step's plan")
    run = stepkit(
        "run",
        "--engine",
        f"scripted:{drive / 'answers.yaml'}",
        "--coder",
        f"command:sh '{drive / 'coder.sh'}'",
        cwd=project,
        env=env,
    )
    assert (run.returncode, run.stdout.splitlines()[0]) == (5, "PAUSED"), run.stdout + run.stderr
    run_id = run.stdout.splitlines()[1].split()[1]
    resumed = stepkit("resume", run_id, "--answer", "approve", cwd=project, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stdout.splitlines()[0] == "STEP_COMPLETE"
    assert (project / "stepkit.toml").read_text() == written
    return resumed.stdout


def answers(what: str, where: str, test: str) -> dict:
    """The scripted engine's answers of a run whose coder adds ``what`` in ``where`` and ``test``."""
    return {
        "orient": {
            "plan_summary": f"Add {what} in {where}.",
            "implementation_brief": f"Add {what} and {test}.",
            "staleness_report": "clean",
            "has_major_deviation": False,
            "deviation_summary": "None",
        },
        "edge_case_sweep": {
            "edge_case_report": f"handled: the empty case ({test})",
            "downstream_updates": "None",
            "needs_independent_review": False,
            "annotations": [],
        },
        "write_handoff": {
            "step_summary": f"{what} added and tested.",
            "result": "complete",
            "summary": f"Added {what}.",
            "completed": f"- {where}: {what}\n- {test}",
            "not_completed": "None",
            "deviations": "None",
            "downstream_plan_updates": "None",
            "edge_cases_discovered": "None",
            "notes_for_next_step": "None",
            "notes_facts": [f"{what} lives in {where}."],
        },
    }


def plan(title: str, objective: str, where: str, test: str, command: str) -> str:
    return (
        f"---\nstep: 1\ntitle: {title}\ndepends_on: []\nstatus: pending\n---\n\n"
        f"## Objective\n{objective}\n\n## Context\n- `{where}` holds the code.\n\n"
        f"## Tasks\n- Add `{title}` to `{where}`.\n- Add `{test}`.\n\n"
        f"## Acceptance criteria\n- {objective}\n\n## Test commands\n- `{command}`\n\n"
        "## Edge cases\n- The empty case.\n\n## Out of scope\n- Anything not named under Tasks.\n"
    )


PLUGGY_CODER = r"""set -e
python3 - <<'PY'
import pathlib
p = pathlib.Path("src/pluggy/_manager.py")
s = p.read_text()
anchor = "    def list_name_plugin(self) -> list[tuple[str, _Plugin]]:\n"
new = '''    def get_plugin_names(self) -> list[str]:
        # the names of the registered plugins, in registration order
        return [name for name, plugin in self._name2plugin.items() if plugin is not None]

'''
assert anchor in s
p.write_text(s.replace(anchor, new + anchor, 1))
PY
cat > testing/test_plugin_names.py <<'PY'
from pluggy import PluginManager


class A:
    pass


def test_names_in_registration_order(pm: PluginManager) -> None:
    pm.register(A(), name="a")
    pm.register(A(), name="b")
    assert pm.get_plugin_names() == ["a", "b"]


def test_no_plugins(pm: PluginManager) -> None:
    assert pm.get_plugin_names() == []
PY
echo "Added PluginManager.get_plugin_names() with testing/test_plugin_names.py."
"""


@pytest.mark.slow
def test_a_first_step_on_pluggy_with_tox_needs_no_stepkit_toml_edit(tmp_path):
    downloads = tmp_path / "downloads"
    _setup(
        [sys.executable, "-m", "pip", "download", "-q", "pluggy==1.5.0", "--no-binary", ":all:"]
        + ["--no-deps", "-d", str(downloads)],
        tmp_path,
        "download the pluggy 1.5.0 sdist",
    )
    project = _unpack(
        downloads / "pluggy-1.5.0.tar.gz", PLUGGY_SHA256, "sha256", tmp_path / "pluggy"
    )
    # as pluggy's CONTRIBUTING says: a .env virtualenv with the dev extras (tox, pre-commit)
    venv.create(project / ".env", with_pip=True)
    _setup(
        [str(project / ".env" / "bin" / "python"), "-m", "pip", "install", "-q", "-e", ".[dev]"],
        project,
        "install pluggy's dev extras",
    )
    (project / ".gitignore").write_text(".env/\n.tox/\nbuild/\n*.egg-info/\n__pycache__/\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "pluggy 1.5.0 from its sdist")
    env = {**os.environ}
    out = first_step(
        project,
        env,
        plan(
            "get_plugin_names",
            "`PluginManager.get_plugin_names()` lists the registered names in order.",
            "src/pluggy/_manager.py",
            "testing/test_plugin_names.py",
            "tox -- testing/test_plugin_names.py",
        ),
        PLUGGY_CODER,
        answers("get_plugin_names", "src/pluggy/_manager.py", "testing/test_plugin_names.py"),
    )
    tests = next(line for line in out.splitlines() if line.startswith("- tests: "))
    assert tests.startswith("- tests: PASS (`tox -e py"), out
    assert "- testing/test_plugin_names.py" in out


FASTIFY_CODER = r"""set -e
node - <<'JS'
const fs = require('node:fs')
const anchor = 'createError.captureStackTrace = true\n'
let s = fs.readFileSync('index.js', 'utf8')
if (!s.includes(anchor)) throw new Error('anchor not found')
s = s.replace(anchor, `function isFastifyError (value) {
  return Boolean(value && value[FastifyGenericErrorSymbol])
}

` + anchor)
fs.writeFileSync('index.js', s + 'module.exports.isFastifyError = isFastifyError\n')
JS
cat > test/is-fastify-error.test.js <<'JS'
'use strict'

const test = require('node:test')
const { createError, isFastifyError } = require('..')

test('an instance of a createError constructor is a Fastify error', (t) => {
  const NewError = createError('CODE', 'Not available')
  t.assert.equal(isFastifyError(new NewError()), true)
})

test('a plain Error, null and a number are not', (t) => {
  t.assert.equal(isFastifyError(new Error('x')), false)
  t.assert.equal(isFastifyError(null), false)
  t.assert.equal(isFastifyError(42), false)
})
JS
echo "Added isFastifyError() to index.js with test/is-fastify-error.test.js."
"""


@pytest.mark.slow
def test_a_first_step_on_a_pnpm_package_needs_no_stepkit_toml_edit(tmp_path):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: pnpm and the package come from the npm registry")
    prefix = tmp_path / "pnpm"
    _setup(["npm", "install", "-g", "--prefix", str(prefix), PNPM], tmp_path, f"install {PNPM}")
    env = {**os.environ, "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    _setup(["npm", "pack", "-q", "@fastify/error@4.3.0"], tmp_path, "fetch @fastify/error 4.3.0")
    project = _unpack(
        tmp_path / "fastify-error-4.3.0.tgz", FASTIFY_ERROR_SHA1, "sha1", tmp_path / "fastify-error"
    )
    (project / ".gitignore").write_text("node_modules/\ncoverage/\n")
    _setup(["pnpm", "install"], project, "install the package's dependencies with pnpm", env)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "@fastify/error 4.3.0, installed with pnpm")
    out = first_step(
        project,
        env,
        plan(
            "isFastifyError",
            "`isFastifyError(value)` is true only for an error a `createError` constructor made.",
            "index.js",
            "test/is-fastify-error.test.js",
            "pnpm run test:unit",
        ),
        FASTIFY_CODER,
        answers("isFastifyError", "index.js", "test/is-fastify-error.test.js"),
    )
    assert "- lint: PASS (`pnpm run lint`" in out, out
    assert "- tests: PASS (`pnpm run test`" in out, out
    assert "- test/is-fastify-error.test.js" in out
