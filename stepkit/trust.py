"""Which of a project's own plugins (``stepconf.py``, the modules named in
``[tool.stepkit] plugins``) stepkit may load: only bytes the user trusted.

A local plugin runs inside stepkit with its full power (it may answer
``stepkit_gate_command`` or ``stepkit_ask``), and the coder a run judges can
write it.  So the sha256 of each local plugin is recorded outside the
project, under ``$XDG_STATE_HOME/stepkit/trust/<key>/`` (``key`` derived
from the resolved project path), with a copy of the trusted bytes there for
the diff.  The first time stepkit loads plugins for a project, what is
there then is trusted on first use, with a note on stderr.  After that a
plugin that is new, or whose bytes differ from the trusted ones, is loaded
only once the user trusts it: ``stepkit trust`` shows the diff and records
it; on a terminal the user is asked with the diff; without one the command
stops with a :class:`~stepkit.errors.PluginError` (exit 2) naming the file.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from stepkit.config import load_config
from stepkit.errors import PluginError, StepkitError
from stepkit.workspace.files import atomic_write

#: Lines of a diff shown before it is cut (the whole file stays readable in the project).
MAX_DIFF_LINES = 200


@dataclass(frozen=True)
class LocalPlugin:
    """A plugin module that lives in the project: its name in the plugin
    manager and its file."""

    name: str
    path: Path


def local_plugin_file(project_dir: Path, spec: str) -> Path | None:
    """The file of a ``[tool.stepkit] plugins`` entry when it lives in the
    project (a ``.py`` path, or a module found there), else None (an installed
    module: the user's environment, not the project's).  Nothing is imported:
    a dotted name is followed through its packages' directories."""
    if spec.endswith(".py"):
        return project_dir / spec
    top, *rest = spec.split(".")
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    if found.submodule_search_locations:
        base = Path(next(iter(found.submodule_search_locations)))
        candidates = (
            [base.joinpath(*rest).with_suffix(".py"), base.joinpath(*rest, "__init__.py")]
            if rest
            else [base / "__init__.py"]
        )
        path = next((c for c in candidates if c.is_file()), None)
    else:
        path = Path(found.origin) if found.origin and not rest else None
    if path is None or not _inside(path, project_dir):
        return None
    return path


def local_plugins(
    project_dir: Path, specs: Iterable[str], stepconf: Path | None
) -> list[LocalPlugin]:
    """The local plugins among ``[tool.stepkit] plugins`` entries ``specs``,
    and ``stepconf`` (None: not loaded), each with its file."""
    found = [
        LocalPlugin(spec, path)
        for spec in specs
        if (path := local_plugin_file(project_dir, spec)) is not None and path.is_file()
    ]
    return [*found, *([LocalPlugin("stepconf", stepconf)] if stepconf is not None else [])]


def require_trusted(project_dir: Path, specs: Iterable[str], stepconf: Path | None) -> set[str]:
    """What the plugin manager calls before it loads the project's plugins:
    :func:`check_trusted` on the local ones (:func:`local_plugins`).

    :return: the names of the local plugins (all trusted now).
    :raises PluginError: one is not trusted.
    """
    plugins = local_plugins(project_dir, specs, stepconf)
    check_trusted(project_dir, plugins)
    return {plugin.name for plugin in plugins}


def untrusted_plugins(project_dir: Path) -> list[str]:
    """The project's local plugins as its files now name them (the
    configuration read again) that the next command would not load: one line
    each, ``<file> is new`` or ``<file> changed since it was trusted``; empty
    before stepkit first loaded plugins here, or when the configuration
    cannot be read (the next command says so itself)."""
    store = TrustStore(project_dir)
    if not store.exists():
        return []
    try:
        specs = load_config(project_dir).plugins
    except StepkitError:
        return []
    stepconf = project_dir / "stepconf.py"
    plugins = local_plugins(project_dir, specs, stepconf if stepconf.is_file() else None)
    return [
        f"{store.rel(p.path)} {'is new' if store.trusted_bytes(p.path) is None else 'changed since it was trusted'}"
        for p in store.untrusted(plugins)
    ]


def check_trusted(project_dir: Path, plugins: Iterable[LocalPlugin]) -> None:
    """Let the plugin manager load ``plugins`` only when their bytes are trusted.

    On the project's first check everything present is trusted on first use
    (a note on stderr).  Later, each new or changed plugin is shown with its
    diff and asked about on a terminal (trusted when the user says yes).

    :raises PluginError: a plugin is not trusted (no terminal, or the user
        said no): its file and ``stepkit trust`` are named.
    """
    store = TrustStore(project_dir)
    plugins = list(plugins)
    if not store.exists():
        store.record(plugins)
        for plugin in plugins:
            print(
                f"stepkit: trusting {store.rel(plugin.path)} on first use (sha256 "
                f"{_digest(plugin.path.read_bytes())[:12]}); `stepkit trust` shows and trusts later changes",
                file=sys.stderr,
            )
        return
    for plugin in store.untrusted(plugins):
        rel = store.rel(plugin.path)
        how = (
            "is new" if store.trusted_bytes(plugin.path) is None else "changed since it was trusted"
        )
        if _interactive() and _ask(
            f"{rel} {how}; not loaded until you trust it.\n{store.diff(plugin.path)}"
            f"Trust {rel} and load it? [y/N] "
        ):
            store.record([plugin], keep_others=True)
            continue
        raise PluginError(
            f"local plugin {rel} {how}: not loaded; review it with "
            f"`stepkit trust --project-dir {project_dir}`"
        )


def trust_all(
    project_dir: Path, plugins: Iterable[LocalPlugin], out: Callable[[str], None]
) -> list[str]:
    """``stepkit trust``: show each untrusted plugin's diff through ``out`` and
    trust the plugins as they are now; return the files newly trusted."""
    store = TrustStore(project_dir)
    plugins = list(plugins)
    changed = store.untrusted(plugins) if store.exists() else plugins
    for plugin in changed:
        out(store.diff(plugin.path))
    store.record(plugins)
    return [store.rel(plugin.path) for plugin in changed]


class TrustStore:
    """The trusted digests and bytes of one project's local plugins."""

    def __init__(self, project_dir: Path):
        self.project = Path(project_dir).resolve()
        key = hashlib.sha256(str(self.project).encode()).hexdigest()[:24]
        self.root = state_home() / "stepkit" / "trust" / key
        self.index = self.root / "trusted.json"

    def exists(self) -> bool:
        return self.index.is_file()

    def rel(self, path: Path) -> str:
        resolved = Path(path).resolve()
        return (
            str(resolved.relative_to(self.project))
            if _inside(resolved, self.project)
            else str(resolved)
        )

    def untrusted(self, plugins: list[LocalPlugin]) -> list[LocalPlugin]:
        """The plugins whose bytes are not the trusted ones (new ones too)."""
        trusted = self._read()
        return [p for p in plugins if trusted.get(self.rel(p.path)) != _digest(p.path.read_bytes())]

    def trusted_bytes(self, path: Path) -> bytes | None:
        digest = self._read().get(self.rel(path))
        copy = self.root / "copies" / digest if digest else None
        return copy.read_bytes() if copy is not None and copy.is_file() else None

    def diff(self, path: Path) -> str:
        """A unified diff from the trusted copy to the file now (a new file: all of it)."""
        rel = self.rel(path)
        old = (self.trusted_bytes(path) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = path.read_bytes().decode("utf-8", "replace").splitlines(keepends=True)
        lines = list(
            difflib.unified_diff(old, new, f"{rel} (trusted)" if old else "/dev/null", rel)
        )
        if len(lines) > MAX_DIFF_LINES:
            lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines\n"]
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def record(self, plugins: list[LocalPlugin], keep_others: bool = False) -> None:
        """Trust ``plugins`` as they are now (and forget any other plugin,
        unless ``keep_others``); the project counts as seen from now on."""
        trusted = self._read() if keep_others else {}
        (self.root / "copies").mkdir(parents=True, exist_ok=True)
        for plugin in plugins:
            data = plugin.path.read_bytes()
            digest = _digest(data)
            atomic_write(self.root / "copies" / digest, data)
            trusted[self.rel(plugin.path)] = digest
        atomic_write(
            self.index, json.dumps({"project": str(self.project), "plugins": trusted}, indent=2)
        )

    def _read(self) -> dict[str, str]:
        try:
            return dict(json.loads(self.index.read_text()).get("plugins") or {})
        except (OSError, ValueError, AttributeError):
            return {}


def state_home() -> Path:
    """``$XDG_STATE_HOME`` (default ``~/.local/state``)."""
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _inside(path: Path, root: Path) -> bool:
    return Path(path).resolve().is_relative_to(Path(root).resolve())


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def _ask(text: str) -> bool:
    print(text, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().casefold() in ("y", "yes")
