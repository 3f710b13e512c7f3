"""The sandbox's policy as bubblewrap arguments and as a macOS profile (this
machine cannot run ``sandbox-exec``: its text is checked), the
environment a confined command gets, ``[sandbox]`` validation, and the
tamper flag of a line that reads the judge's marks."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.errors import UsageError
from stepkit.workspace import process, sandbox
from stepkit.workspace.scope.tamper import file_flags
from stepkit.workspace.tools import builtin_tools


def policy(tmp_path: Path, **fields) -> sandbox.Policy:
    private = tmp_path / "state" / "scratch" / "private"
    private.mkdir(parents=True)
    return sandbox.Policy(private=private, **fields)


def test_bwrap_hides_then_binds_then_hides_what_lies_inside_the_tree(tmp_path):
    tree, state, store = (
        tmp_path / "tree",
        tmp_path / "state",
        tmp_path / "tree" / ".git" / "stepkit",
    )
    store.mkdir(parents=True)
    given = policy(tmp_path, hidden=(state, store), network=False)
    args = sandbox.bwrap_args(given, tree)
    text = " ".join(args)
    assert args[1:4] == ["--ro-bind", "/", "/"]
    assert "--unshare-pid" in args and "--die-with-parent" in args and "--unshare-net" in args
    # the private dir lies inside the hidden state dir: bound after it is hidden
    assert text.index(f"--tmpfs {state}") < text.index(f"--bind {given.private}")
    # the run store lies inside the tree: hidden after the tree is bound
    assert text.index(f"--bind {tree} {tree}") < text.index(f"--tmpfs {store}")
    assert args[-3:] == ["--chdir", str(tree), "--"]


def test_bwrap_binds_a_report_dir_inside_the_hidden_run_store_after_hiding_it(tmp_path):
    tree = tmp_path / "tree"
    store = tree / ".git" / "stepkit"
    report = store / "main" / "runs" / "r" / "logs" / "tests-1.report"
    report.mkdir(parents=True)
    args = " ".join(sandbox.bwrap_args(policy(tmp_path, hidden=(store,), writable=(report,)), tree))
    assert args.index(f"--bind {tree} {tree}") < args.index(f"--tmpfs {store}")
    assert args.index(f"--tmpfs {store}") < args.index(f"--bind {report} {report}")


def test_bwrap_keeps_stepkits_installation_read_only_inside_the_tree(tmp_path):
    tree = tmp_path / "tree"
    prefix = tree / ".venv"
    prefix.mkdir(parents=True)
    args = " ".join(sandbox.bwrap_args(policy(tmp_path, protected=(prefix,)), tree))
    assert args.index(f"--bind {tree} {tree}") < args.index(f"--ro-bind {prefix} {prefix}")


@pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap is not installed")
def test_a_wrapped_command_writes_its_tree_and_nothing_else(tmp_path):
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    home.mkdir()
    given = policy(tmp_path, hidden=(tmp_path / "state",))
    argv, env = given.wrap(
        f"echo ok > done; echo no > {home}/x; ls {tmp_path}/state; echo $TMPDIR",
        tree,
        {"PATH": "/usr/bin:/bin", "TMUX": "/tmp/tmux-0/default,1,0", "STEPKIT_RUN_DIR": "x"},
    )
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert (tree / "done").read_text() == "ok\n"
    assert not (home / "x").exists()
    assert "Read-only file system" in out.stderr
    assert out.stdout.split()[-2:] == ["scratch", str(given.private / "tmp")]
    assert "TMUX" not in env and "STEPKIT_RUN_DIR" not in env


def test_the_sbpl_profile_denies_writes_but_to_the_tree_and_hides_what_is_hidden(tmp_path):
    tree, state = tmp_path / "tree", tmp_path / "state"
    store = tree / ".git" / "stepkit"
    given = policy(
        tmp_path,
        writable=(Path("/home/u/.codex"),),
        readable=(Path("/opt/shared"),),
        hidden=(state, store),
        protected=(tree / ".venv",),
        network=False,
    )
    lines = sandbox.sbpl_profile(given, tree).splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    for hidden in (state, store):
        assert f'(deny file-read* file-write* (subpath "{hidden}"))' in lines
        assert f'(deny network-outbound (remote unix-socket (subpath "{hidden}")))' in lines
    for writable in (tree, given.private, Path("/home/u/.codex")):
        assert f'(allow file-read* file-write* (subpath "{writable}"))' in lines
    assert '(allow file-read* (subpath "/opt/shared"))' in lines
    # the last rule that matches wins: what lies inside comes after what holds it
    order = [
        f'(deny file-read* file-write* (subpath "{state}"))',
        f'(allow file-read* file-write* (subpath "{given.private}"))',
    ]
    assert lines.index(order[0]) < lines.index(order[1])
    order = [
        f'(allow file-read* file-write* (subpath "{tree}"))',
        f'(deny file-read* file-write* (subpath "{store}"))',
        f'(deny file-write* (subpath "{tree / ".venv"}"))',
    ]
    assert lines.index(order[0]) < lines.index(order[1])
    assert lines.index(order[0]) < lines.index(order[2])
    assert lines[-1] == "(deny network*)"


def test_the_sbpl_profile_quotes_paths(tmp_path):
    text = sandbox.sbpl_profile(policy(tmp_path), Path('/p/a "b"\\c'))
    assert '(subpath "/p/a \\"b\\"\\\\c")' in text


def test_session_paths_follow_the_variables(tmp_path):
    found = sandbox.session_paths(
        {
            "TMUX": "/tmp/t/sock,12,0",
            "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/bus,guid=1;unix:abstract=/x",
            "XDG_RUNTIME_DIR": "/run/user/7",
        }
    )
    assert {Path("/tmp/t"), Path("/tmp/ssh-x/agent.1"), Path("/run/bus"), Path("/run/user/7")} <= (
        set(found)
    )


def test_a_confined_environment_has_private_temp_and_caches(tmp_path):
    env = sandbox.confined_env(
        {"HOME": "/h", "SSH_AUTH_SOCK": "s", "STEPKIT_SEAL_KEY": "k"}, tmp_path
    )
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    assert env["XDG_CACHE_HOME"] == str(tmp_path / "cache")
    assert env["HOME"] == "/h" and "SSH_AUTH_SOCK" not in env and "STEPKIT_SEAL_KEY" not in env


def test_each_cache_a_tool_declares_is_private(tmp_path):
    """The caches come from the tools' declarations: pip's, npm's and go's
    (declared in their plugins), each in the private directory."""
    env = sandbox.confined_env({"PIP_CACHE_DIR": "/home/u/.cache/pip"}, tmp_path)
    declared = {var: sub for tool in builtin_tools().declared for var, sub in tool.caches}
    assert {"PIP_CACHE_DIR", "npm_config_cache", "GOCACHE", "GOMODCACHE"} <= set(declared)
    for variable, sub in declared.items():
        assert env[variable] == str(tmp_path / sub)


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("required = 'yes'", "sandbox.required"),
        ("network = 3", "sandbox.network"),
        ("writable = ['~']", "sandbox.writable"),
        ("readable = ['']", "sandbox.readable"),
        ("writeable = ['x']", "sandbox.writeable"),
    ],
)
def test_sandbox_settings_are_validated(tmp_path, table, problem):
    (tmp_path / "stepkit.toml").write_text(f"[sandbox]\n{table}\n")
    with pytest.raises(UsageError, match=problem):
        load_config(tmp_path)


def test_sandbox_settings_default_to_a_networked_optional_sandbox(tmp_path):
    (tmp_path / "stepkit.toml").write_text("[sandbox]\nwritable = ['~/.m2']\n")
    settings = load_config(tmp_path).sandbox
    assert (settings.required, settings.network, settings.writable) == (False, True, ["~/.m2"])


@pytest.mark.parametrize(
    "line",
    [
        "addopts = os.environ['PYTEST_ADDOPTS']",
        "run = os.environ.get('STEPKIT_RUN_DIR')",
        "state = Path.home() / '.local/state/stepkit/secret'",
        "glob('.git/stepkit/**/*.json')",
    ],
)
def test_a_line_that_reads_the_judges_marks_is_flagged_with_its_number(line):
    old = b"import os\n"
    flags = file_flags("tests/test_x.py", "a", "b", old, old + line.encode() + b"\n")
    assert [(f.kind, f.path, f.line()) for f in flags] == [
        ("judge_marks", "tests/test_x.py", f"reads the judge's marks in tests/test_x.py:2: {line}")
    ]


def test_a_line_that_was_there_before_is_not_flagged():
    text = b"import os\nX = os.environ.get('PYTEST_ADDOPTS')\n"
    assert file_flags("conftest.py", "a", "b", text, text + b"Y = 1\n") == []


needs_bwrap = pytest.mark.skipif(
    sys.platform != "linux" or sandbox.unavailable() is not None, reason="no bubblewrap sandbox"
)

#: Unix sockets a confined command makes in its temp dir: named as Claude
#: Code's sandbox names its network proxy's, and multiprocessing's listener.
SOCKETS = {
    "claude-proxy": "import os, socket; socket.socket(socket.AF_UNIX).bind("
    "os.path.join(os.environ['TMPDIR'], 'claude-http-' + '0' * 16 + '.sock'))",
    "multiprocessing": "from multiprocessing.connection import Listener; "
    "Listener(family='AF_UNIX').close()",
}


@needs_bwrap
@pytest.mark.parametrize("code", SOCKETS.values(), ids=SOCKETS)
def test_a_unix_socket_in_the_temp_dir_fits_whatever_the_state_dirs_length(
    code, tmp_path, monkeypatch
):
    """sun_path holds 108 bytes: the private temp dir must not be as deep as
    stepkit's state dir (a long home directory made Claude Code's sandbox
    fail: "unix socket address 122 characters long")."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ("state-" + "x" * 60)))
    tree = tmp_path / "tree"
    tree.mkdir()
    with sandbox.confined(sandbox.policy_for(tree, tmp_path / "store")) as given:
        assert given is not None
        run = process.run(f"{sys.executable} -c {shlex.quote(code)}", cwd=tree, timeout=60)
    assert run.exit_code == 0, run.output


@pytest.mark.parametrize("planted", ["link", "shared"])
def test_a_private_home_someone_else_could_reach_is_not_used(planted, tmp_path, monkeypatch):
    """A ``stepkit-UID`` planted in the shared temp dir (a link to elsewhere,
    or a directory others may write) is passed over for the state directory."""
    monkeypatch.setattr(sandbox, "PRIVATE_PARENT", tmp_path / "tmp")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    planted_at = tmp_path / "tmp" / f"stepkit-{os.getuid()}"
    planted_at.parent.mkdir()
    if planted == "link":
        (tmp_path / "elsewhere").mkdir()
        planted_at.symlink_to(tmp_path / "elsewhere")
    else:
        planted_at.mkdir(mode=0o777)
        planted_at.chmod(0o777)
    assert sandbox.private_home() == sandbox.scratch_home()
    if planted == "link":
        planted_at.unlink()
    else:
        planted_at.rmdir()
    assert sandbox.private_home() == planted_at  # made afresh: this user's alone


def test_the_private_home_is_in_the_users_runtime_dir_where_there_is_one(tmp_path, monkeypatch):
    """Sockets belong in ``$XDG_RUNTIME_DIR`` (the XDG spec); /tmp only without it."""
    runtime = tmp_path / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setattr(sandbox, "PRIVATE_PARENT", tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert sandbox.private_home() == runtime / "stepkit"
    assert (runtime / "stepkit").stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/run")  # not a runtime dir: the temp dir's
    assert sandbox.private_home() == tmp_path / "tmp" / f"stepkit-{os.getuid()}"


@needs_bwrap
def test_another_runs_confined_command_does_not_see_a_private_dir(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    with sandbox.confined(sandbox.policy_for(tree, tmp_path / "store")) as mine:
        assert mine is not None
        secret = mine.private / "tmp" / "secret"
        secret.write_text("the prompt")
        with sandbox.confined(sandbox.policy_for(tree, tmp_path / "store")):
            run = process.run(f"cat {secret} 2>&1; ls {mine.private.parent} 2>&1", cwd=tree)
    assert "No such file" in run.output, run.output
    assert "the prompt" not in run.output and f"{mine.private.name}\n" not in run.output


#: A process that makes a policy, says its private directory and waits.
_HOLDER = (
    "import sys; from pathlib import Path; from stepkit.workspace import sandbox; "
    "p = sandbox.policy_for(Path(sys.argv[1]), Path(sys.argv[2])); "
    "print(p.private, flush=True); sys.stdin.read()"
)


@needs_bwrap
def test_a_killed_runs_private_dir_is_swept_and_a_live_ones_kept(tmp_path):
    """A run killed with SIGKILL never leaves its blocks: its private dir
    (temp files, caches, maybe a prompt) would stay in /tmp for good."""
    tree = tmp_path / "tree"
    tree.mkdir()
    holders = [
        subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(tree), str(tmp_path / "store")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    killed, live = (Path(h.stdout.readline().strip()) for h in holders)
    assert killed.parent == live.parent == sandbox.private_home()
    holders[0].kill()
    holders[0].wait()
    try:
        with sandbox.confined(sandbox.policy_for(tree, tmp_path / "store")):
            assert not killed.exists()
            assert live.is_dir()
    finally:
        holders[1].communicate("")
