"""The coder and the code under test run confined: a command coder that
broke calc.add and then reaches outside the step's tree (the user's home
and its git config, stepkit's own installed environment, the user's tmux
server, a file beside the project) changes nothing there; so does the code
under test the gates run.  A variant of each class no rule names is held
too.  Where no sandbox can be made the run says so, and the approval
carries a flag that forces the review; ``[sandbox] required`` refuses.

Real projects in tmp dirs, the real CLI, real bubblewrap, a real tmux
server; the command coder is the suite's script (tests/support/e2e.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sysconfig
import tempfile
import venv
from pathlib import Path

import pytest

from tests.support.e2e import GOOD_MUL, PY, make_project, sh, unconfined_env
from tests.support.variants import first_by_default

BROKEN_ADD = "def add(a, b):\n    return a - b\n"
UNCONFINED = "the coder ran unconfined"

pytestmark = pytest.mark.skipif(
    not shutil.which("bwrap"), reason="bubblewrap is not installed (.ci/run installs it)"
)


def run_trick(tmp_path: Path, shell: str, **env: str):
    """A run whose coder breaks calc.add, runs ``shell`` (its failure
    ignored: a trick that is held simply does nothing) and gives up."""
    project = make_project(tmp_path)
    project.coder_actions(
        {
            "write": {"calc.py": BROKEN_ADD},
            "shell": f"( {shell} ) >/dev/null 2>&1 || true",
            "sentinel": "CODER_FAILED gave up",
        }
    )
    return project, project.run(env=project.env(**env))


def tmp_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    return home


@pytest.mark.parametrize(
    "rel",
    first_by_default(
        [".gitconfig", ".bashrc", ".config/pip/pip.conf"]
    ),  # the last two: no rule names them
)
def test_the_coder_cannot_write_the_users_home(tmp_path, rel):
    home = tmp_home(tmp_path)
    project, result = run_trick(
        tmp_path,
        f'mkdir -p "$(dirname ~/{rel})" && printf "[filter \\"x\\"]\\n smudge = evil\\n" > ~/{rel}',
        HOME=str(home),
    )
    assert result.code != 2, result.stderr
    assert project.coder_calls() == 1
    assert not (home / rel).exists()


def test_the_coder_cannot_write_stepkits_installed_environment(tmp_path):
    env_dir = tmp_path / "stepkit-venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    # stepkit and its dependencies as the suite's environment has them (its .pth files too)
    suite = sysconfig.get_paths()["purelib"]
    (site / "suite.pth").write_text(f"import site; site.addsitedir({suite!r})\n")
    plugin = site / "stepkit_evil_plugin.py"
    project = make_project(tmp_path)
    project.coder_actions(
        {
            "write": {"calc.py": BROKEN_ADD},
            "shell": f"( echo 'APPROVE = 1' > {sh(plugin)} ) 2>/dev/null || true",
            "sentinel": "CODER_FAILED gave up",
        }
    )
    result = subprocess.run(
        [python, "-m", "stepkit", *project.run_args(), "--json"],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert '"outcome"' in result.stdout, result.stderr
    assert project.coder_calls() == 1
    assert not plugin.exists()


@pytest.mark.slow
def test_the_coder_cannot_reach_the_users_tmux_server(tmp_path):
    sockets = tmp_path / "tmux-sockets"
    sockets.mkdir()
    sock = sockets / "user"
    tmux = ["tmux", "-S", str(sock)]
    plain = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run([*tmux, "new-session", "-d", "sleep 600"], check=True, env=plain)
    try:
        # set-environment returns once the server took it: no waiting for a window to run
        _, result = run_trick(
            tmp_path,
            f"tmux -S {sh(sock)} set-environment -g OWNED 1"
            ' ; tmux -S "${TMUX%%,*}" set-environment -g OWNED 2',
            TMUX=f"{sock},1,0",
        )
        assert result.code != 2, result.stderr
        shown = subprocess.run(
            [*tmux, "show-environment", "-g", "OWNED"],
            check=False,
            capture_output=True,
            text=True,
            env=plain,
        )
        assert "OWNED=" not in shown.stdout, shown.stdout
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, env=plain)


def test_the_coder_cannot_reach_a_socket_in_the_users_runtime_dir(tmp_path):
    """A variant no rule names: some session service's socket in $XDG_RUNTIME_DIR."""
    # a short path: a unix socket's is limited to 107 bytes, and tmp_path is deep
    runtime = Path(tempfile.mkdtemp(prefix="run-user-"))
    path = runtime / "service.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(0.1)
    try:
        connect = (
            f"{sh(PY)} -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}')\""
        )
        run_trick(tmp_path, connect, XDG_RUNTIME_DIR=str(runtime))
        with pytest.raises(TimeoutError):
            listener.accept()[0].close()
    finally:
        listener.close()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "through_link", first_by_default([False, True])
)  # a link out of the tree: no rule names it
def test_the_coder_cannot_write_beside_the_project(tmp_path, through_link):
    outside = tmp_path / "outside.txt"
    target = "link-out/outside.txt" if through_link else str(outside)
    link = f"ln -s {sh(tmp_path)} link-out && " if through_link else ""
    run_trick(tmp_path, f"{link}echo owned > {sh(target)}")
    assert not outside.exists()


@pytest.mark.slow
def test_the_code_under_test_is_confined_too(tmp_path):
    """An honest-looking coder whose calc.py, imported by every gate, writes
    outside the tree: nothing is written, and the run reaches the approval."""
    home = tmp_home(tmp_path)
    project = make_project(tmp_path)
    sneaky = (
        "import os\n"
        "try:\n"
        "    open(os.path.expanduser('~/.gitconfig'), 'a').write('[core]\\n')\n"
        "except OSError:\n"
        "    pass\n" + GOOD_MUL
    )
    project.coder_actions({"write": {"calc.py": sneaky}, "sentinel": "CODER_COMPLETE"})
    result = project.run(env=project.env(HOME=str(home)))
    assert result.code == 5, result.stdout + result.stderr
    assert not (home / ".gitconfig").exists()
    assert UNCONFINED not in result.stdout


@pytest.mark.slow
def test_a_test_that_reads_the_judges_marks_is_a_flag_naming_the_line(tmp_path):
    project = make_project(tmp_path)
    peek = "import os\n\nREPORT = os.environ.get('PYTEST_ADDOPTS')\n"
    project.coder_actions(
        {"write": {"calc.py": GOOD_MUL, "peek.py": peek}, "sentinel": "CODER_COMPLETE"}
    )
    result = project.run()
    assert result.code == 5, result.stdout + result.stderr
    question = result.data["pending"]["question"]
    assert "reads the judge's marks in peek.py:3: REPORT = os.environ.get('PYTEST_ADDOPTS')" in (
        question
    )


@pytest.mark.slow
def test_without_a_sandbox_the_run_says_so_and_the_approval_is_flagged(tmp_path):
    project = make_project(tmp_path)
    result = project.run(env=project.env(**unconfined_env(tmp_path)))
    assert "the coder will run unconfined: bwrap cannot create its namespaces" in result.stderr
    assert result.code == 5, result.stdout + result.stderr
    assert UNCONFINED in result.data["pending"]["question"]
    reviews = project.state_dir / "reviewer_calls"
    assert reviews.exists(), "the flag forces the independent review"


def test_a_required_sandbox_refuses_to_start_without_one(tmp_path):
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace("[sandbox]\n", "[sandbox]\nrequired = true\n"))
    result = project.run(env=project.env(**unconfined_env(tmp_path)), json_out=False)
    assert result.code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [
        (
            "stepkit: error: [sandbox] required = true, but the coder cannot be confined: "
            "bwrap cannot create its namespaces here: bwrap: No permissions to create new namespace"
        )
    ]
    assert project.coder_calls() == 0
