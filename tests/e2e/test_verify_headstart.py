"""``stepkit verify``'s head start (:mod:`stepkit.workspace.headstart`):
the last verify's commands start before the set-up has finished, and the
verdict is the one a verify without it gives.

Each test runs the real CLI on a real git repository.  The probe of
"before the set-up" is what the gate sees of its parent: a verify that has
set up has loaded pydantic's compiled core (its configuration is read
through it); a command started ahead of that finds none of it in
``/proc/<stepkit>/maps``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import stepkit
from tests.support.crash import assert_stopped, wait_for_file
from tests.support.e2e import clean_env, sh
from tests.support.gitrepo import git, init_repo

PASSING = "def test_ok():\n    assert 1 + 1 == 2\n"


def _project(tmp_path: Path, tests: str, **files: str) -> Path:
    """A git project whose only gate commands are ``tests`` (and what
    ``files`` configure), with one passing test."""
    commands = {"format": "", "lint": "", "build": "", "tests": tests}
    toml = "[commands]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in commands.items())
    return init_repo(
        tmp_path / "project",
        {
            "stepkit.toml": toml,
            "tests/test_ok.py": PASSING,
            ".gitignore": "__pycache__/\n",
            **files,
        },
    )


def _probe(tmp_path: Path, then: str = "") -> tuple[str, Path]:
    """A tests command that first notes (outside the project) whether it
    started before its verify reached the gate: ``1`` when this verify's
    log directory has no tests log yet (the verify opens it just before it
    spawns the command), ``0`` when it has; the file it notes in."""
    seen = tmp_path / "seen"
    runs = ".git/stepkit/main/verify"
    note = (
        f"n=$(ls -d {runs}/*/ | wc -l); l=$(ls {runs}/*/logs/tests-*.log 2>/dev/null | wc -l); "
        f"echo $((n - l)) > {sh(seen)}"
    )
    return f"{note}; {then}python -m pytest -q -p no:cacheprovider", seen


def _verify(project: Path, *args: str, **env: str) -> dict:
    done = stepkit("verify", "--json", *args, cwd=project, env=clean_env(**env))
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _same(data: dict) -> str:
    """The verify's JSON without its timings and log directory."""
    for gate in data["gates"]:
        for key in ("duration_s", "started_at"):
            gate.pop(key, None)
    text = json.dumps(data, indent=1, sort_keys=True)
    return re.sub(r"verify/[0-9]+-[0-9]+-[0-9a-f]+/|in [0-9.]+s", "X", text)


def test_the_first_gate_starts_before_the_set_up_ends(tmp_path: Path) -> None:
    tests, seen = _probe(tmp_path)
    project = _project(tmp_path, tests)
    first = _verify(project)
    assert seen.read_text().strip() == "0"  # nothing to replay yet: started after the set-up
    again = _verify(project)
    assert seen.read_text().strip() == "1", "the tests gate started after the set-up"
    assert _same(again) == _same(first)
    assert again["ok"]


@pytest.mark.slow
def test_the_demo_verifies_the_same_with_and_without_it(tmp_path: Path) -> None:
    from stepkit.cli.demo import prepare_demo_project

    project = prepare_demo_project(tmp_path)
    first = _same(_verify(project))
    assert _same(_verify(project)) == first  # replayed
    assert _same(_verify(project, STEPKIT_HEAD_START="0")) == first


@pytest.mark.slow
def test_a_format_gate_that_rewrites_a_file_keeps_its_changes_its_own(tmp_path: Path) -> None:
    tests, seen = _probe(tmp_path)
    fmt = "import pathlib; pathlib.Path('a.py').write_text('x = 1\\n')"
    project = _project(tmp_path, tests, **{"a.py": "x=1\n", "fmt.py": fmt})
    toml = (project / "stepkit.toml").read_text().replace('format = ""', 'format = "python fmt.py"')
    (project / "stepkit.toml").write_text(toml)
    git(project, "commit", "-qam", "format")
    runs = []
    for env in ({}, {}, {"STEPKIT_HEAD_START": "0"}):
        git(project, "checkout", "-q", "--", "a.py")
        runs.append(_same(_verify(project, "--fix", **env)))
    assert runs[1] == runs[0] == runs[2]
    gates = {g["name"]: g for g in json.loads(runs[1])["gates"]}
    assert gates["format"]["changed_files"] == ["a.py"]
    assert gates["tests"]["changed_files"] == []
    assert "a.py (restored" in gates["format"]["evidence"]
    # the formatter changed the tree: nothing after it is started ahead of the set-up
    assert seen.read_text().strip() == "0"


def test_a_changed_tests_command_is_never_taken_for_the_old_one(tmp_path: Path) -> None:
    project = _project(tmp_path, "python -m pytest -q")
    assert _verify(project)["ok"]
    toml = (project / "stepkit.toml").read_text()
    (project / "stepkit.toml").write_text(toml.replace("pytest -q", "pytest -q; exit 3"))
    now = {g["name"]: g for g in _verify(project)["gates"]}["tests"]
    assert now["command"] == "python -m pytest -q; exit 3"
    assert now["status"] == "fail"


@pytest.mark.slow
def test_a_changed_environment_is_not_replayed(tmp_path: Path) -> None:
    tests, seen = _probe(tmp_path)
    project = _project(tmp_path, tests)
    _verify(project)
    _verify(project, SOME_SETTING="1")
    assert seen.read_text().strip() == "0"


@pytest.mark.slow
def test_a_test_edited_between_verifies_is_judged_as_it_is_now(tmp_path: Path) -> None:
    """The variant the fix was not written for: the files the gates read
    (no configuration) change; the command is started early and its
    verdict is the new one."""
    tests, seen = _probe(tmp_path)
    project = _project(tmp_path, tests)
    assert _verify(project)["ok"]
    (project / "tests" / "test_ok.py").write_text(PASSING.replace("== 2", "== 3"))
    data = _verify(project)
    assert seen.read_text().strip() == "1"
    assert not data["ok"]
    assert {g["name"]: g for g in data["gates"]}["tests"]["status"] == "fail"


@pytest.mark.slow
def test_output_past_the_cap_still_streams_through_the_verify(tmp_path: Path) -> None:
    big = "import sys; [sys.stdout.write(f'line {i} ' + 'x' * 90 + chr(10)) for i in range(60000)]"
    (tmp_path / "big.py").write_text(big)
    tests, seen = _probe(tmp_path, f"python {sh(tmp_path / 'big.py')}; ")
    project = _project(tmp_path, tests)
    first = _same(_verify(project))
    replayed = _same(_verify(project))
    assert seen.read_text().strip() == "1"
    assert replayed == first
    assert _same(_verify(project, STEPKIT_HEAD_START="0")) == first
    log = max(project.glob(".git/stepkit/main/verify/*/logs/tests-*.log"))
    assert log.stat().st_size > 6_000_000


@pytest.mark.slow
@pytest.mark.parametrize("hang_as", ["exec sleep 120", "sleep 120 & wait"])
def test_a_stop_signal_leaves_no_command_of_the_head_start_running(
    tmp_path: Path, hang_as: str
) -> None:
    """``sleep 120 & wait``: the killed group has a member besides its
    leader, which the stopping thread reaps while the head start's thread,
    woken by the leader's exit, finds the group empty."""
    hang, pid = tmp_path / "hang", tmp_path / "pid"
    tests = f"if [ -e {sh(hang)} ]; then echo $$ > {sh(pid)}; {hang_as}; fi; python -m pytest -q"
    project = _project(tmp_path, tests)
    _verify(project)
    hang.touch()
    for sig in (signal.SIGTERM, signal.SIGINT):
        pid.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "stepkit", "verify", "--json"],
            cwd=project,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for_file(pid, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig, err
        assert_stopped(pid, "the head-started tests command")


@pytest.mark.slow
def test_a_record_stepkit_did_not_seal_starts_nothing(tmp_path: Path) -> None:
    """A record planted in stepkit's state home (its seal stripped, or its
    commands edited under the old seal) would start commands of its own
    before the set-up could say no: it is never replayed."""
    from stepkit.workspace.headstart import record_file

    tests, seen = _probe(tmp_path)
    project = _project(tmp_path, tests)
    _verify(project)
    record = record_file(project.resolve())
    sealed = record.read_text()
    data = json.loads(sealed)
    data.pop("seal", None)
    for planted in (json.dumps(data), sealed.replace("pytest -q", "pytest -q -x")):
        record.write_text(planted)
        _verify(project)
        assert seen.read_text().strip() == "0", "a planted record was replayed"


def _stepkit(project: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``argv`` (a shell or Python that starts stepkit) in ``project``, as a user's shell would."""
    return subprocess.run(
        list(argv),
        cwd=project,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_verify_with_stdin_closed_takes_the_lock_the_head_start_holds(tmp_path: Path) -> None:
    """With no stdin the head start's lock is file descriptor 0: still this
    verify's own lock, never "another verify is running"."""
    tests, seen = _probe(tmp_path)
    project = _project(tmp_path, tests)
    for _ in range(2):
        done = _stepkit(
            project, "sh", "-c", 'exec 0<&-; exec "$0" -m stepkit verify --json', sys.executable
        )
        assert done.returncode == 0, done.stderr
    assert seen.read_text().strip() == "1", "the second verify had no head start"


@pytest.mark.slow
def test_a_command_that_answered_exits_at_once_its_exit_handlers_run(tmp_path: Path) -> None:
    """Its answer given, a command (a verify, and any other) skips the
    interpreter's teardown (which would finalize ``torn``, as it does when
    the command's function is called and the interpreter exits as usual),
    but what asked to run at exit (``atexit``) still runs, and the answer
    and the exit code are whole."""
    project = _project(tmp_path, "python -m pytest -q -p no:cacheprovider")
    script = (
        "import atexit, os, sys\n"
        "class Torn:\n"
        "    def __del__(self, write=os.write):  # the module's names are gone by then\n"
        "        write(2, b'torn down\\n')\n"
        "torn = Torn()\n"
        "atexit.register(lambda: os.write(2, b'exit handlers ran\\n'))\n"
        "sys.argv[0] = 'stepkit'\n"
        "from stepkit.cli import entry, main\n"
        "entry() if os.environ.get('THROUGH') == 'entry' else sys.exit(main())\n"
    )
    said = {}
    for command, through in (("verify", "entry"), ("detect", "entry"), ("detect", "main")):
        done = _stepkit(project, sys.executable, "-c", script, command, "--json", THROUGH=through)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)
        said[command, through] = done.stderr
    for answered in (("verify", "entry"), ("detect", "entry")):
        assert "exit handlers ran" in said[answered]
        assert "torn down" not in said[answered]
    assert "torn down" in said["detect", "main"]  # the usual exit, which the test would see
