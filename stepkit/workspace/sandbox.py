"""The OS sandbox every command that runs the coder's code starts in: the
coder (a command, a CLI preset, the built-in coder's ``run_command``), the
gates, the baseline and the pristine re-check, and all they start.

A node that runs the coder's code sets a :class:`Policy` for its thread
(:func:`confined`, by :func:`stepkit.protocol.watched.watched`);
:func:`stepkit.workspace.process.run` wraps every command it starts while
one is set (:meth:`Policy.wrap`), so there is one place where a confined
process starts.  What a confined command sees:

- writable: the tree it runs in (its working directory), a private
  directory of the node under :func:`private_home` (``TMPDIR``,
  ``XDG_CACHE_HOME`` and the other caches point into it), the paths a
  caller adds for one command (:func:`widened`: a CLI's own state, a test
  runner's report directory) and ``[sandbox] writable``;
- read-only: the rest of the filesystem, the home directory and its
  configuration, stepkit's own installation (``sys.prefix``, also when
  it lies inside the tree) and the gates' tools;
- not there: stepkit's state directory (the sealing key, trust store,
  locks, other runs' work trees and scratch copies), the other nodes'
  private directories, the project's run store, and the user's session
  sockets (tmux, the ssh agent, the session bus, ``$XDG_RUNTIME_DIR``),
  whose variables are dropped;
- its own PID namespace, killed with stepkit (``--die-with-parent``); the
  network unless ``[sandbox] network = false``.

On Linux this is bubblewrap (``bwrap``); on macOS ``sandbox-exec`` with a
generated profile (:func:`sbpl_profile`).  Where neither can confine
(:func:`unavailable`), commands run as before and the node says so with a
tamper flag, which forces the review.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from stepkit.workspace import ahead
from stepkit.workspace.files import state_home
from stepkit.workspace.tools import builtin_tools

#: The flag a node that ran the coder's code without a sandbox carries.
UNCONFINED_FLAG = (
    "the coder ran unconfined: {why}. Nothing kept it from writing outside the step's "
    "tree (your home directory, stepkit's own installation, the gates' tools)"
)
#: Variables that lead to the user's session (their sockets are hidden too).
SESSION_VARIABLES = (
    "TMUX",
    "TMUX_PANE",
    "STY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
)
#: stepkit's variables a confined command never gets: the run's directory
#: (stepkit finds a confined command's processes through the sandbox itself)
#: and the sealing key a CI job may carry.
HIDDEN_VARIABLES = ("STEPKIT_RUN_DIR", "STEPKIT_SEAL_KEY")
#: The one cache variable every tool may read (``name``: subdirectory);
#: the tools' own are in their declarations (:attr:`Tool.caches`).
_XDG_CACHE = {"XDG_CACHE_HOME": "cache"}
_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")
#: Where :func:`private_home` is (not ``$TMPDIR``, which may be as deep).
PRIVATE_PARENT = Path("/tmp")
_SCRATCH = "scratch"
#: A private directory's name: the process that made it, then mkdtemp's part.
_PRIVATE_NAME = re.compile(r"private-(\d+)-")


@dataclass(frozen=True)
class Policy:
    """What a confined command may reach (the tree is its working directory).

    :ivar private: the node's private directory (temp files and caches).
    :ivar writable: besides the tree and ``private``.
    :ivar readable: shown read-only though under a hidden path.
    :ivar hidden: not there at all (directories become empty, files /dev/null).
    :ivar protected: read-only even inside the tree (stepkit's installation).
    :ivar network: keep the network.
    """

    private: Path
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()
    network: bool = True
    system: str = field(default="bwrap")

    def wrap(
        self, command: str, cwd: Path, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """The argv that runs ``command`` through the shell in ``cwd``,
        confined, and the environment to start it with (passed on as it is:
        in the argv, a secret would show in every ``ps``)."""
        inner = confined_env(env, self.private)
        if self.system == "sandbox-exec":
            profile = sbpl_profile(self, Path(cwd))
            return ["sandbox-exec", "-p", profile, "/bin/sh", "-c", command], inner
        shell = ["/bin/sh", "-c", command]
        env_tool = _signal_env()
        if env_tool is None:
            return [*bwrap_args(self, Path(cwd)), *shell], inner
        # bwrap's outer process must outlive a stop signal to its group, or
        # --die-with-parent would SIGKILL the command before its grace to clean up
        # ends: it ignores them, and the command gets them back as it starts
        signals = ",".join(_STOP_SIGNALS)
        return [
            env_tool,
            f"--ignore-signal={signals}",
            *bwrap_args(self, Path(cwd)),
            env_tool,
            f"--default-signal={signals}",
            *shell,
        ], inner


_POLICY: ContextVar[Policy | None] = ContextVar("stepkit_sandbox", default=None)


def current() -> Policy | None:
    """The policy of this thread's commands, if a node set one."""
    return _POLICY.get()


@contextlib.contextmanager
def confined(policy: Policy | None) -> Iterator[Policy | None]:
    """Confine the commands this thread starts in the block by ``policy``
    (None: unconfined); its private directory is removed afterwards."""
    reset = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(reset)
        if policy is not None:
            shutil.rmtree(policy.private, ignore_errors=True)


@contextlib.contextmanager
def widened(paths: Iterable[Path]) -> Iterator[None]:
    """Let the commands started in the block also write ``paths`` (those
    that exist); nothing changes where no policy is set."""
    policy = current()
    if policy is None:
        yield
        return
    extra = _existing(Path(p) for p in paths)
    reset = _POLICY.set(replace(policy, writable=(*policy.writable, *extra)))
    try:
        yield
    finally:
        _POLICY.reset(reset)


def private_file(name: str) -> Path | None:
    """A path in the current policy's private directory a confined command
    can read and write (None: no policy, any path will do)."""
    policy = current()
    return None if policy is None else policy.private / name


def scratch_dir(prefix: str) -> Path:
    """A new directory for stepkit's scratch copies and a CLI's own files:
    under stepkit's state directory, which no other run's confined command
    sees (not a shared temp directory)."""
    parent = state_home() / _SCRATCH
    parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def scratch_home() -> Path:
    """Where :func:`scratch_dir` makes its directories."""
    return state_home() / _SCRATCH


def private_home() -> Path:
    """Where the policies' private directories are: a short path, which
    leaves room in a unix socket's address (108 bytes) for the sockets a
    confined command makes in ``TMPDIR`` (Claude Code's sandbox proxy,
    multiprocessing) however deep the state directory lies.

    The user's runtime directory (``$XDG_RUNTIME_DIR/stepkit``: where the
    XDG spec puts a user's sockets) where there is one, else
    ``/tmp/stepkit-UID``; each only when it is this user's alone (mode
    0700, not a link), and hidden in every sandbox as the state directory
    is.  The state directory's scratch where neither is."""
    uid = os.getuid()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    candidates = [Path(runtime) / "stepkit"] if Path(runtime).is_absolute() else []
    for root in [*candidates, PRIVATE_PARENT / f"stepkit-{uid}"]:
        if _users_own(root, uid):
            return root
    fallback = scratch_home()
    fallback.mkdir(parents=True, exist_ok=True, mode=0o700)
    return fallback


def _users_own(root: Path, uid: int) -> bool:
    """``root`` exists (made here if it can be) as a directory of ``uid``
    that no one else may enter, and its parent is no one else's to change."""
    with contextlib.suppress(OSError):
        parent = os.lstat(root.parent)
        if parent.st_uid != uid and not parent.st_mode & stat.S_ISVTX:
            return False  # another user's directory (a runtime dir not ours)
        root.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(root)
        return stat.S_ISDIR(found.st_mode) and found.st_uid == uid and not found.st_mode & 0o077
    return False


# -- which system confines -------------------------------------------------------


def system() -> str | None:
    """``bwrap`` or ``sandbox-exec``, whichever this machine confines with."""
    if sys.platform == "darwin":
        return "sandbox-exec" if shutil.which("sandbox-exec") else None
    return "bwrap" if _bwrap() else None


def dies_with_stepkit(policy: Policy | None) -> bool:
    """A command confined by ``policy`` dies with stepkit, even with a
    stepkit killed by SIGKILL (bwrap ``--die-with-parent``); neither an
    unconfined command nor one under ``sandbox-exec`` does."""
    return policy is not None and system() == "bwrap"


#: The signals stepkit stops a command with (process.run, the engine's interrupts).
_STOP_SIGNALS = ("TERM", "INT", "HUP")


@functools.cache
def _signal_env() -> str | None:
    """coreutils' ``env`` when it can ignore signals for a program and give
    them back (``--ignore-signal``, ``--default-signal``: coreutils 8.31);
    else None."""
    found = shutil.which("env")
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [found, "--ignore-signal=TERM", found, "--default-signal=TERM", "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


@functools.cache
def _bwrap() -> str | None:
    """bwrap's path, found once on stepkit's own PATH (never the one a
    command's PATH, which may lead into the tree, would find)."""
    return shutil.which("bwrap")


@dataclass(frozen=True)
class Unconfinable:
    """Why commands cannot be confined here, and what would let them be."""

    why: str
    fix: str


#: What lets bubblewrap create its namespaces where a kernel or a container refuses them.
NAMESPACES_FIX = (
    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
    "on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0), "
    "or run stepkit outside the container that forbids them"
)


def diagnosis() -> Unconfinable | None:
    """Why commands cannot be confined here and the fix (None: they can).
    bubblewrap is tried once per process (:func:`ask_ahead` may have
    started it): a kernel or a container may refuse it its namespaces."""
    return ahead.asking("sandbox", _diagnosis, "stepkit-sandbox").result()


def ask_ahead() -> None:
    """Start trying bubblewrap (a process) while the caller goes on: a run
    or a resume checks, before its first node, that it can confine its coder."""
    ahead.asking("sandbox", _diagnosis, "stepkit-sandbox")


def _diagnosis() -> Unconfinable | None:
    found = system()
    if found is None:
        if sys.platform == "darwin":
            return Unconfinable(
                "sandbox-exec is not on PATH", "put /usr/bin, where macOS keeps it, on PATH"
            )
        return Unconfinable(
            "no sandbox on this machine (install bubblewrap: apt-get install bubblewrap)",
            "install bubblewrap: apt-get install bubblewrap (dnf, pacman and brew name it the same)",
        )
    if found == "sandbox-exec":
        return None
    try:
        probe = subprocess.run(
            [*_base_args(), "--unshare-pid", "--die-with-parent", "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Unconfinable(f"bwrap could not run: {exc}", "reinstall bubblewrap")
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return Unconfinable(
            f"bwrap cannot create its namespaces here: {said[-1] if said else probe.returncode}",
            NAMESPACES_FIX,
        )
    return None


def unavailable() -> str | None:
    """Why commands cannot be confined here (None: they can); see :func:`diagnosis`."""
    found = diagnosis()
    return None if found is None else found.why


def describe() -> str:
    """What confines here, as it names itself (``bubblewrap 0.8.0``; ``sandbox-exec``)."""
    found = system()
    if found != "bwrap":
        return str(found)
    try:
        said = subprocess.run(
            [_bwrap() or "bwrap", "--version"], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "bwrap"
    return said.stdout.decode("utf-8", "replace").strip() or "bwrap"


# -- the policy of a run --------------------------------------------------------


def policy_for(
    project_dir: Path,
    store: Path,
    writable: Iterable[str] = (),
    readable: Iterable[str] = (),
    network: bool = True,
) -> Policy | None:
    """The policy of a node of ``project_dir``'s run (None: this machine
    cannot confine; see :func:`unavailable`).

    :param store: the run store's root (hidden).
    :param writable: ``[sandbox] writable``; ``readable``: ``[sandbox] readable``.
    """
    found = system()
    if found is None or unavailable() is not None:
        return None
    home = private_home()
    sweep_orphans(home)
    # resolved: macOS's /tmp is a link, and its sandbox matches resolved paths
    private = Path(os.path.realpath(tempfile.mkdtemp(prefix=f"private-{os.getpid()}-", dir=home)))
    for sub in ("tmp", *cache_variables().values()):
        (private / sub).mkdir(parents=True, exist_ok=True)
    return Policy(
        private=private,
        writable=_existing(user_paths(writable, project_dir)),
        readable=_existing(user_paths(readable, project_dir)),
        hidden=_existing([state_home(), home, store, *session_paths()]),
        protected=_existing({Path(sys.prefix), Path(sys.base_prefix)}),
        network=network,
        system=found,
    )


def sweep_orphans(home: Path) -> None:
    """Remove the private directories in ``home`` whose process is gone (a
    run killed before its blocks ended); a live process's are left alone."""
    with contextlib.suppress(OSError), os.scandir(home) as entries:
        for entry in entries:
            pid = _PRIVATE_NAME.match(entry.name)
            if pid and not _alive(int(pid[1])):
                shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: not ours to judge
    return True


def user_paths(paths: Iterable[str], project_dir: Path) -> list[Path]:
    """``[sandbox]`` paths as absolute ones: ``~`` expanded, relative to the project."""
    return [Path(project_dir, os.path.expanduser(p)).absolute() for p in paths]


def session_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the user's session sockets are: tmux's directories (``$TMUX``'s
    socket and the default ``tmux-UID``), the ssh agent's socket, the
    session bus's, and the runtime directory."""
    env = os.environ if environ is None else environ
    uid = os.getuid() if hasattr(os, "getuid") else 0
    found: list[Path] = []
    if env.get("TMUX"):
        found.append(Path(env["TMUX"].split(",", 1)[0]).parent)
    for base in {env.get("TMUX_TMPDIR") or "/tmp", "/tmp"}:
        found.append(Path(base) / f"tmux-{uid}")
    if env.get("SSH_AUTH_SOCK"):
        found.append(Path(env["SSH_AUTH_SOCK"]))
    bus = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    for part in bus.split(";"):
        for option in part.partition(":")[2].split(","):
            key, _, value = option.partition("=")
            if key == "path" and value:
                found.append(Path(value))
    found.append(Path(env.get("XDG_RUNTIME_DIR") or f"/run/user/{uid}"))
    return [p for p in found if p.is_absolute()]


def _existing(paths: Iterable[Path]) -> tuple[Path, ...]:
    seen: dict[Path, None] = {}
    for path in paths:
        if os.path.lexists(path):
            seen.setdefault(Path(os.path.realpath(path)), None)
    return tuple(seen)


def cache_variables() -> dict[str, str]:
    """Each variable that moves a cache (``name``: subdirectory of the
    private directory): XDG's and the built-in tools' declared ones."""
    return {**_XDG_CACHE, **builtin_tools().caches}


def confined_env(env: Mapping[str, str], private: Path) -> dict[str, str]:
    """``env`` as a confined command gets it: no session variables nor
    :data:`HIDDEN_VARIABLES`, temp files and caches in ``private``."""
    dropped = {*SESSION_VARIABLES, *HIDDEN_VARIABLES}
    inner = {k: v for k, v in env.items() if k not in dropped}
    inner.update(dict.fromkeys(_TEMP_VARIABLES, str(private / "tmp")))
    inner.update({name: str(private / sub) for name, sub in cache_variables().items()})
    return inner


# -- bubblewrap -----------------------------------------------------------------


def _base_args() -> list[str]:
    return [_bwrap() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


#: How a path is shown, in the order of the kinds at one depth.
HIDDEN, READABLE, WRITABLE, PROTECTED = "hidden", "readable", "writable", "protected"


def layers(policy: Policy, tree: Path) -> list[tuple[str, Path]]:
    """The policy's paths, each with how it is shown, outermost first: what
    lies inside another path is laid over it afterwards, so the run store
    inside the project's .git is hidden in a writable tree, a report
    directory inside the run store is writable, stepkit's installation
    inside the tree is read-only."""
    kinds = {HIDDEN: policy.hidden, READABLE: policy.readable, PROTECTED: policy.protected}
    kinds[WRITABLE] = (Path(os.path.realpath(tree)), policy.private, *policy.writable)
    order = (HIDDEN, READABLE, WRITABLE, PROTECTED)
    found = {(kind, Path(path)) for kind, paths in kinds.items() for path in paths}
    return sorted(found, key=lambda item: (len(item[1].parts), order.index(item[0]), item[1]))


def bwrap_args(policy: Policy, tree: Path) -> list[str]:
    """bwrap's arguments up to the command: the whole filesystem read-only,
    then each of :func:`layers` mounted over it (later mounts lie over
    earlier ones)."""
    # no --new-session: the command already leads a session with no terminal
    # (process.run), and one more would hand bwrap's init to stepkit as a detached process
    args = [*_base_args(), "--unshare-pid", "--die-with-parent"]
    if not policy.network:
        args.append("--unshare-net")
    for kind, path in layers(policy, tree):
        if kind == HIDDEN and path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", str(path)]
        elif kind == HIDDEN:
            args += ["--ro-bind", "/dev/null", str(path)]
        else:
            args += ["--bind" if kind == WRITABLE else "--ro-bind", str(path), str(path)]
    return [*args, "--chdir", str(Path(os.path.realpath(tree))), "--"]


# -- macOS ----------------------------------------------------------------------


def sbpl_profile(policy: Policy, tree: Path) -> str:
    """The ``sandbox-exec`` profile of one confined command: reads allowed,
    writes only to the terminal devices; then each of :func:`layers` as a
    rule (the last rule that matches wins, as the last mount does in
    :func:`bwrap_args`): a hidden path can be neither read nor written nor
    connected to as a unix socket.  No network unless the policy keeps it."""

    def subpath(path: Path) -> str:
        return f"(subpath {_sbpl_string(str(path))})"

    rules = {
        HIDDEN: "(deny file-read* file-write* {0})\n(deny network-outbound (remote unix-socket {0}))",
        READABLE: "(allow file-read* {0})",
        WRITABLE: "(allow file-read* file-write* {0})",
        PROTECTED: "(deny file-write* {0})",
    }
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))',
        *(rules[kind].format(subpath(path)) for kind, path in layers(policy, tree)),
    ]
    if not policy.network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def _sbpl_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
