"""A head start for ``stepkit verify``: the commands of the last verify,
started while this one still sets up.

At its end a verify from the command line saves what it spawned from its
first look at the tree to its end, in order (:func:`window`, :func:`save`):
each gate command as :func:`stepkit.workspace.process.run` spawned it and
each git command the tree's snapshots ran (argv, working directory, the
environment as a difference from stepkit's own), and the key under which it
may be replayed: the verify's arguments and directory, a digest of the
environment, the identity of this stepkit install and of every entry at the
project's root (its configuration and the manifests its gates were detected
from).  The record is kept outside the project (:func:`record_file`), sealed
(:mod:`stepkit.workspace.seal`): one that stepkit did not write, or that
was edited since, is never replayed.

The next verify with the same key, before it imports anything else
(:func:`begin`, from :func:`stepkit.cli.entry`), takes the project's lock
and starts the record in a thread of its own: each gate only once the last
command has exited and closed its output, the git reads between two gates
together (:meth:`HeadStart._start_reads`), a gate's output read into memory
up to :data:`CAP` (past that it is left blocked on its pipe until the
verify adopts it).  A gate is started only while the tree is as the first
snapshot saw it (every snapshot after a gate equal to the first:
:func:`_state`); a snapshot that differs is kept back, with what was read
beside it, and nothing after it starts.  The verify's set-up waits until
the first gate runs (at most :data:`_LEAD_S`): until then its imports would
share the interpreter with the head start's own work.

The verify itself runs as it would without it.  Each command it is about
to spawn is first offered here (:func:`take`): when it is exactly the next
one started (argv, directory, the whole environment but the command's
token, no input), the verify adopts it (the running process and what it
printed, or a git command's finished result) and supervises it from there;
anything else cancels the head start: what it started and nobody adopted is
killed (:meth:`HeadStart.cancel`), and the verify spawns everything itself
from then on.  The same happens when the command ends (:func:`close`).
``STEPKIT_HEAD_START=0`` turns it off.

Only the standard library is imported here before the thread starts;
:mod:`stepkit.workspace.supervision` is imported in the thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stepkit.workspace.files import state_home

#: The environment variable that turns the head start off (``0``).
SWITCH = "STEPKIT_HEAD_START"
#: Bytes of a command's output kept in memory before the verify adopts it.
CAP = 1024 * 1024
#: The variable carrying a command's token (:data:`supervision.TOKEN_VARIABLE`), never compared.
_TOKEN = "STEPKIT_COMMAND_ID"
_CHUNK = 1024 * 1024
#: Seconds to wait for a killed command's output to close.
_DRAIN_S = 2.0
#: Seconds the set-up waits at most for the head start's first gate to start.
_LEAD_S = 0.1


def record_file(project: str | Path) -> Path:
    """Where the head start of ``project`` (a resolved path) is kept."""
    name = hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return state_home() / "headstart" / f"{name}.json"


def _project_of(argv: list[str]) -> str:
    """The project directory ``stepkit verify`` was given (resolved)."""
    where = "."
    for i, word in enumerate(argv):
        if word == "--project-dir" and i + 1 < len(argv):
            where = argv[i + 1]
        elif word.startswith("--project-dir="):
            where = word.split("=", 1)[1]
    return os.path.realpath(os.path.expanduser(where))


def _identity(path: str) -> list[int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _key(argv: list[str], project: str) -> dict[str, Any]:
    """When a record may be replayed (see the module docstring)."""
    environment = json.dumps(sorted(os.environ.items()))
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        names = sorted(entry.name for entry in os.scandir(project) if entry.name != ".git")
    except OSError:
        names = []
    return {
        "argv": argv,
        "cwd": os.getcwd(),
        "env": hashlib.sha256(environment.encode("utf-8", "surrogateescape")).hexdigest(),
        "install": [sys.executable, package, _identity(package), _identity(__file__)],
        "files": {name: _identity(os.path.join(project, name)) for name in names},
    }


# -- recording ------------------------------------------------------------------

#: ``stepkit verify``'s arguments, when this process is one (:func:`begin`)
_ARGV: list[str] | None = None
#: what the verify spawned so far in its :func:`window` (None: outside it)
_RECORDING: list[dict[str, Any]] | None = None


@contextmanager
def window() -> Iterator[None]:
    """Record (and offer for adoption) what the block spawns; what the head
    start started and the block did not adopt is killed at its end."""
    global _RECORDING
    _RECORDING = [] if _ARGV is not None else None
    try:
        yield
    finally:
        if _ACTIVE is not None:
            _ACTIVE.cancel()


def claim_logs(parent: Path) -> Path | None:
    """The head start's log directory for this verify, when it made one under ``parent``."""
    return _ACTIVE.claim_logs(parent) if _ACTIVE is not None else None


def save(project: Path, lock_file: Path, logs: Path) -> None:
    """Keep what the verify's :func:`window` spawned as the next verify's
    head start (nothing when the verify did not come from the command line)."""
    global _RECORDING
    items, _RECORDING = _RECORDING, None
    if items is None or _ARGV is None:
        return
    from stepkit.workspace.seal import write_sealed

    base = os.environ
    for item in items:
        env = item.pop("env")
        item["unset"] = sorted(set(base) - set(env))
        item["set"] = {k: v for k, v in env.items() if base.get(k) != v}
    record = {
        "key": _key(_ARGV, str(project)),
        "lock": str(lock_file),
        "logs": str(logs),
        "items": _replayable(items),
    }
    try:  # not fsynced: a record lost with the machine costs one head start
        write_sealed(record_file(project), json.dumps(record), durable=False)
    except OSError:
        pass  # no head start next time: nothing else changes


def _replayable(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items up to the first gate that changed the tree (a later
    snapshot differs from the first), or that read input."""
    base: dict[str, Any] = {}
    gate_at, gates = None, False
    for i, item in enumerate(items):
        state = item.pop("state", None)
        if item["stdin"] is not None:
            return items[:i]
        if item["kind"] == "gate":
            gate_at, gates = i, True
        elif state is not None:
            if not gates:
                base.setdefault(item["cwd"], state)
            elif base.get(item["cwd"]) != state:
                return items[:gate_at]
    return items


def ran(argv: list[str], cwd: Path, done: subprocess.CompletedProcess[bytes]) -> None:
    """A git command of the window ran: a snapshot's state is kept to
    compare (:func:`_replayable`)."""
    if _RECORDING and _RECORDING[-1]["argv"] == argv and _is_listing(argv) and not done.returncode:
        _RECORDING[-1]["state"] = _state(str(cwd), done.stdout)


#: The git commands the head start starts together (:meth:`HeadStart._start_reads`):
#: they read the tree and write nothing (``GIT_OPTIONAL_LOCKS=0``: not even the index).
_READS = frozenset({"ls-files", "rev-parse", "status"})


def _git_subcommand(argv: list[str]) -> str | None:
    """``status`` of ``git -c k=v status …``."""
    words = iter(argv[1:])
    for word in words:
        if word == "-c":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _is_listing(argv: list[str]) -> bool:
    from stepkit.workspace.scope.listing import LISTING

    return argv[-len(LISTING) :] == LISTING


def _state(cwd: str, out: bytes) -> list[Any]:
    """What a snapshot saw, to compare: the ids git gave, and the identity
    of each file whose bytes the snapshot hashes itself (caches too: a gate
    that left a new one is taken for one that changed the tree)."""
    from stepkit.workspace.scope.listing import parse_listing

    index = parse_listing(out, Path(cwd))
    dirty = sorted((rel, _identity(os.path.join(cwd, rel))) for rel in index.dirty)
    return [sorted(index.ids.items()), dirty]


# -- replaying ------------------------------------------------------------------


def _env(item: dict[str, Any]) -> dict[str, str]:
    """The environment a recorded item starts with."""
    env = {k: v for k, v in os.environ.items() if k not in item["unset"]}
    env.update(item["set"])
    return env


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` (a recorded item or part of one) naming ``new`` where it named ``old``."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    return value


class Feed(threading.Thread):
    """Reads a head-started command's output: into memory until it is
    adopted (blocking the command past :data:`CAP`), then into the verify's
    capture.  Offers what :class:`stepkit.workspace.process._Reader` does."""

    def __init__(self, stream: Any):
        super().__init__(name="stepkit-headstart-output", daemon=True)
        self._stream = stream
        self._kept: list[bytes] = []
        self._size = 0
        self._sink: Any = None
        self._dropped = False
        self._cond = threading.Condition()
        self.last_output = time.monotonic()
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            with self._stream:
                while chunk := self._stream.read1(_CHUNK):
                    self.last_output = time.monotonic()
                    with self._cond:
                        self._cond.wait_for(lambda: self._sink or self._dropped or self._size < CAP)
                        if self._sink is None:
                            if not self._dropped:
                                self._kept.append(chunk)
                                self._size += len(chunk)
                            continue
                    self._sink.feed(chunk)  # only this thread feeds, in order
        except Exception as exc:  # noqa: BLE001 - raised by the adopting verify
            self.error = exc

    def attach(self, capture: Any) -> None:
        """From now on the output goes to ``capture``, what was read first."""
        with self._cond:
            for chunk in self._kept:
                capture.feed(chunk)
            self._kept, self._sink = [], capture
            self._cond.notify_all()

    def drop(self) -> None:
        """Read on, keeping nothing (the command is being stopped)."""
        with self._cond:
            self._kept, self._dropped = [], True
            self._cond.notify_all()


class Launched:
    """One recorded item the head start started.

    :ivar proc: a gate's process; :ivar result: a git command's result
        (None: it is kept back, the verify runs it itself).
    """

    def __init__(self, item: dict[str, Any]):
        self.item = item
        self.proc: subprocess.Popen[bytes] | None = None
        self.result: subprocess.CompletedProcess[bytes] | None = None
        self.token = ""
        self.group: int | None = None
        self.since: Any = None
        self.started = 0.0
        self.reader: Feed | None = None
        #: a snapshot's state when it was taken (:func:`_state`), for the record
        self.state: list[Any] | None = None
        self.settled = threading.Event()


class HeadStart:
    """The recorded items, started one after the other in a thread."""

    def __init__(self, items: list[dict[str, Any]], lock_fd: int | None, logs: str):
        self.items = items
        self.lock_fd = lock_fd
        #: the recorded verify's log directory; this one's (:meth:`claim_logs`)
        self.logs = logs
        self.new_logs: str | None = None
        self.logs_ready = threading.Event()
        #: set once the first gate runs (or nothing more will start)
        self.under_way = threading.Event()
        self._switch = sys.getswitchinterval()
        self.launched: list[Launched] = []
        self.adopted = 0
        self.stopped = False  # nothing more starts
        self.finished = False  # the thread has ended
        self._cond = threading.Condition()
        self._reaper = False
        self._thread = threading.Thread(target=self._run, name="stepkit-headstart", daemon=True)

    def start(self) -> None:
        # while the set-up holds the interpreter, the head start gets it back
        # at once each time one of its commands ends, not after up to 5 ms
        sys.setswitchinterval(0.0005)
        self._thread.start()

    # the thread --------------------------------------------------------------

    def _run(self) -> None:
        try:
            # beside the git commands, which need none of it: started once the first of
            # them are (its imports would hold the interpreter while they are spawned)
            ready = threading.Thread(target=self._prepare, daemon=True)
            base: dict[str, Any] = {}
            gates = unchecked = False
            index = 0
            while index < len(self.items):
                if self.items[index]["kind"] == "gate":
                    if unchecked:
                        break  # the last gate's snapshot is not known to equal the first
                    if not ready.ident:
                        ready.start()
                    ready.join()  # the items name this verify's log directory from here on
                    launched = self._launch(self.items[index])
                    if launched is None or not self._finish_gate(launched):
                        break
                    gates = unchecked = True
                    index += 1
                    continue
                batch = self._start_reads(index)
                if not batch:
                    break
                if not ready.ident:
                    ready.start()
                index += len(batch)
                for launched, proc in batch:
                    out, err = proc.communicate()
                    launched.result = subprocess.CompletedProcess(
                        launched.item["argv"], proc.returncode, out, err
                    )
                for launched, _ in batch:
                    assert launched.result is not None
                    if _is_listing(launched.result.args) and not launched.result.returncode:
                        state = launched.state = _state(
                            launched.item["cwd"], launched.result.stdout
                        )
                        if not gates:
                            base.setdefault(launched.item["cwd"], state)
                        elif base.get(launched.item["cwd"]) == state:
                            unchecked = False
                        else:
                            # the verify looks itself, after its put-backs; what was
                            # read beside it saw the tree before them: never adopted
                            launched.result = None
                            with self._cond:
                                del self.launched[self.launched.index(launched) + 1 :]
                            return
                    launched.settled.set()
        except Exception:  # noqa: BLE001, S110 - a head start that fails is no head start
            pass
        finally:
            sys.setswitchinterval(self._switch)
            self.logs_ready.set()
            self.under_way.set()
            with self._cond:
                self.stopped = self.finished = True
                for launched in self.launched:
                    launched.settled.set()
                self._cond.notify_all()

    def _new_logs(self) -> None:
        """A log directory of this verify's, named where the record named the last one's."""
        from stepkit.workspace.files import new_stamped_dir

        try:
            recorded = Path(self.logs)
            logs = str(new_stamped_dir(recorded.parent.parent) / recorded.name)
            self.items = _moved(self.items, self.logs, logs)
            self.new_logs = logs
        finally:
            self.logs_ready.set()

    def claim_logs(self, parent: Path) -> Path | None:
        """This verify's log directory, made by the head start (once; None:
        it made none under ``parent``)."""
        self.logs_ready.wait()
        logs, self.new_logs = self.new_logs, None
        return Path(logs) if logs and Path(logs).parent.parent == parent else None

    def _prepare(self) -> None:
        """What a gate needs: this process as the subreaper, the log directory."""
        from stepkit.workspace import supervision

        supervision.SUBREAPER.__enter__()
        self._reaper = True
        self._new_logs()

    def _start_reads(self, index: int) -> list[tuple[Launched, subprocess.Popen[bytes]]]:
        """Start the git command at ``index`` and, when it only reads, the
        reads right after it, all at once: no gate runs between them, so
        each sees the tree as it would one after the other.  Empty: stopped."""
        end = index + 1
        if _git_subcommand(self.items[index]["argv"]) in _READS:
            while (
                end < len(self.items)
                and self.items[end]["kind"] == "git"
                and _git_subcommand(self.items[end]["argv"]) in _READS
            ):
                end += 1
        batch = [
            (
                Launched(item),
                subprocess.Popen(
                    item["argv"],
                    cwd=item["cwd"],
                    env=_env(item),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                ),
            )
            for item in self.items[index:end]
        ]
        with self._cond:
            late = self.stopped
            if not late:
                self.launched.extend(launched for launched, _ in batch)
                self._cond.notify_all()
        if late:
            for _, proc in batch:
                proc.kill()
                proc.communicate()
            return []
        return batch

    def _launch(self, item: dict[str, Any]) -> Launched | None:
        """Start a gate (None: stopped)."""
        from stepkit.workspace import supervision

        launched = Launched(item)
        with self._cond:
            if self.stopped:
                return None
        launched.token = supervision.new_token()
        launched.since = supervision.mark()
        launched.started = time.monotonic()
        with supervision.SPAWNING:
            launched.proc = subprocess.Popen(
                item["argv"],
                shell=item["shell"],
                cwd=item["cwd"],
                env={**_env(item), _TOKEN: launched.token},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            launched.group = launched.proc.pid
            supervision.register(launched.token, launched.group)
        self.under_way.set()
        launched.reader = Feed(launched.proc.stdout)
        launched.reader.start()
        launched.settled.set()  # adopted while it runs
        with self._cond:
            self.launched.append(launched)
            self._cond.notify_all()
            late = self.stopped
        if late:
            self._stop(launched)
            return None
        return launched

    def _finish_gate(self, launched: Launched) -> bool:
        """Wait for the gate to exit and close its output; whether the next
        item may start (nothing of its process group still runs)."""
        assert launched.proc is not None and launched.reader is not None
        launched.proc.wait()
        launched.reader.join()
        try:
            os.killpg(launched.proc.pid, 0)
        except ProcessLookupError:
            launched.group = None  # empty: nothing to kill, and the id may be reused
            return not self.stopped
        return False

    # the verify's side -------------------------------------------------------

    def take(self, item: dict[str, Any]) -> Launched | None:
        """The next started item when it is exactly ``item``; else None
        (the head start is cancelled when they differ)."""
        with self._cond:
            index = self.adopted
            self._cond.wait_for(lambda: len(self.launched) > index or self.finished)
            if len(self.launched) <= index:
                return None
            launched = self.launched[index]
        recorded = {k: v for k, v in launched.item.items() if k not in ("unset", "set")}
        if {**recorded, "env": _env(launched.item)} != item:
            self.cancel()
            return None
        launched.settled.wait()
        with self._cond:
            self.adopted += 1
        if item["kind"] == "git" and launched.result is None:
            return None
        return launched

    def cancel(self) -> None:
        """Start nothing more; kill what was started and not adopted."""
        with self._cond:
            self.stopped = True
            pending = self.launched[self.adopted :]
            self.adopted = len(self.launched)
            self._cond.notify_all()
        for launched in pending:
            self._stop(launched)
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None

    def _stop(self, launched: Launched) -> None:
        if launched.proc is None:
            return
        from stepkit.workspace import supervision

        assert launched.reader is not None
        launched.reader.drop()
        # read once: the head start's thread forgets the group (None) the moment it finds it empty
        group = launched.group
        if group is not None:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        launched.proc.wait()
        if group is not None:
            while True:
                try:
                    os.waitpid(-group, 0)
                except ChildProcessError:
                    break
        supervision.stop_detached(launched.token, launched.since)
        supervision.unregister(launched.token)
        launched.reader.join(_DRAIN_S)

    def close(self) -> None:
        """The command ends: cancel, and stop being the subreaper."""
        self.cancel()
        self._thread.join(_DRAIN_S)
        if self._reaper:
            from stepkit.workspace import supervision

            self._reaper = False
            supervision.SUBREAPER.__exit__(None, None, None)


#: the head start of this process's verify, while there is one
_ACTIVE: HeadStart | None = None


def begin(argv: list[str]) -> bool:
    """``argv`` is ``stepkit verify``'s: start its recorded head start when
    the key matches and the project's lock is free; whether it started.  The
    caller holds the stop signals first and calls :func:`close` at the end."""
    global _ARGV, _ACTIVE
    if argv[:1] != ["verify"] or os.environ.get(SWITCH) == "0":
        return False
    _ARGV = list(argv)
    project = _project_of(argv)
    from stepkit.workspace.seal import SealBroken, read_sealed

    try:  # sealed: a record planted by anyone who cannot read stepkit's secret starts nothing
        record = json.loads(read_sealed(record_file(project)))
    except (OSError, ValueError, SealBroken):
        return False
    if not isinstance(record, dict) or record.get("key") != _key(_ARGV, project):
        return False
    if not record.get("items"):
        return False
    import fcntl

    try:
        fd = os.open(record["lock"], os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # a run or another verify works on the project: it will say so
    _ACTIVE = HeadStart(record["items"], fd, record["logs"])
    _ACTIVE.start()
    # the interpreter is the head start's until its first gate runs: the set-up's
    # imports, which have time until that gate ends, would take half of it
    _ACTIVE.under_way.wait(_LEAD_S)
    return True


def held_lock(lock_file: Path) -> int | None:
    """The project lock the head start took for ``lock_file``, handed over (once)."""
    if _ACTIVE is None or _ACTIVE.lock_fd is None:
        return None
    try:
        held, wanted = os.fstat(_ACTIVE.lock_fd), os.stat(lock_file)
    except OSError:
        return None
    if (held.st_dev, held.st_ino) != (wanted.st_dev, wanted.st_ino):
        return None
    fd, _ACTIVE.lock_fd = _ACTIVE.lock_fd, None
    return fd


def take(kind: str, argv: list[str] | str, cwd: Path, env: Mapping[str, str], stdin: Any) -> Any:
    """What the verify is about to spawn: recorded, and adopted when it is
    the head start's next item (a gate: its :class:`Launched`; git: its
    result); None: spawn it."""
    if _RECORDING is None:
        return None
    item = {
        "kind": kind,
        "argv": argv,
        "shell": isinstance(argv, str),
        "cwd": str(cwd),
        "env": {k: v for k, v in env.items() if k != _TOKEN},
        "stdin": stdin if stdin is None or isinstance(stdin, str) else "<bytes>",
    }
    _RECORDING.append(dict(item))
    if _ACTIVE is None or _ACTIVE.stopped and _ACTIVE.adopted >= len(_ACTIVE.launched):
        return None
    launched = _ACTIVE.take(item)
    if launched is None:
        return None
    if launched.state is not None:
        _RECORDING[-1]["state"] = launched.state
    return launched if kind == "gate" else launched.result


def close() -> None:
    """The command ends: what the head start started and nothing adopted is killed."""
    global _ACTIVE
    if _ACTIVE is not None:
        _ACTIVE.close()
        _ACTIVE = None
