"""The installed files of the tools that judge a step: the distributions
the gate commands start (pytest and what it imports, ruff, mypy …) in the
site directories of the gates' Pythons, and stepkit's own.

They are outside the project, yet a coder running as the user can write
them: a line changed in ``site-packages/_pytest/reports.py`` turns every
failed report into a passed one, in the gate and in the pristine re-check
alike; a module added to stepkit's installed package and an entry point
added to its ``entry_points.txt`` is a plugin the next stepkit process
loads.  :func:`fingerprint` reads the files each distribution's installer
recorded (``*.dist-info/RECORD``) and every file now in the package
directories RECORD names (a module added there), and takes their sha256;
a run takes one when it starts, every gate takes one again, and any
difference (:func:`changes`) fails the tests gate.

Only the distributions the gate commands use are read (a word of a
command naming a distribution, a module or a console script it installs,
the plugins a test runner among them loads (its declared ``plugin_group``:
pytest's ``pytest11``), then everything they require), not
the whole of site-packages: a few hundred files, tens of milliseconds the
first time; a later fingerprint reads only the files whose identity moved
since (:func:`_sha256`; bench/installed_cost.py), in this process or an
earlier one (their digests are kept in a sealed record under stepkit's state
directory, where no confined command reaches: :func:`_record_path`).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from stepkit.workspace.files import state_home
from stepkit.workspace.runners import builtin_runners
from stepkit.workspace.seal import SealBroken, read_sealed, write_sealed

#: what a fingerprint holds at most per distribution (a package of tens of thousands of files)
MAX_FILES = 5000
#: the directories Python writes in a package as it imports it
ROUTINE = frozenset({"__pycache__"})


def fingerprint(site_dirs: Iterable[str], commands: Iterable[str | None]) -> dict[str, str]:
    """``{path: sha256}`` of every installed file of the distributions the
    ``commands`` use in ``site_dirs``, and of stepkit's own distribution and packages."""
    site_dirs = list(site_dirs)
    dists = _distributions(site_dirs)
    words = {word.lower() for c in commands if c for word in re.findall(r"[\w.+-]+", c)}
    wanted = {name for name, dist in dists.items() if _used(name, dist, words)}
    for runner in builtin_runners().declared:
        if runner.plugin_group and _normal(runner.name) in wanted:
            group = f"[{runner.plugin_group}]"
            wanted |= {name for name, dist in dists.items() if group in _entry_points(dist)}
    # stepkit's own distribution, not what it requires: the gates do not run that
    wanted = _required(wanted, dists) | ({"stepkit"} & dists.keys())
    record = _record_path(site_dirs)
    _load_kept(record)
    hashed = _hashed
    found = _own_files()
    for name in sorted(wanted):
        found.update(_files(dists[name]))
    if _hashed != hashed:
        _save_kept(record, found)
    return found


def changes(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """``<path> (changed|removed|added)`` of each installed file that differs."""
    found = [f"{p} (changed)" for p, id_ in now.items() if p in before and before[p] != id_]
    found += [f"{p} (removed)" for p in before if p not in now]
    found += [f"{p} (added)" for p in now if p not in before]
    return sorted(found)


class _Dist:
    """One ``*.dist-info`` directory, each of its files read once (a
    fingerprint asks for METADATA and ``entry_points.txt`` twice)."""

    def __init__(self, info: Path) -> None:
        self.info = info
        self.site = info.parent
        self._texts: dict[str, str] = {}

    def read(self, name: str) -> str:
        text = self._texts.get(name)
        if text is None:
            try:
                text = (self.info / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._texts[name] = text
        return text

    def record(self) -> list[str]:
        """The paths RECORD lists, relative to the site directory."""
        return [row[0] for row in csv.reader(self.read("RECORD").splitlines()) if row]


def _distributions(site_dirs: Iterable[str]) -> dict[str, _Dist]:
    """Normalised name → distribution, the first site directory's winning (as Python imports)."""
    found: dict[str, _Dist] = {}
    for site in site_dirs:
        try:
            entries = sorted(os.scandir(site), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".dist-info") and entry.is_dir():
                dist = _Dist(Path(entry.path))
                found.setdefault(_normal(_name_of(dist)), dist)
    return found


def _name_of(dist: _Dist) -> str:
    match = re.search(r"^Name:\s*(\S+)", dist.read("METADATA"), re.MULTILINE)
    return match.group(1) if match else dist.info.name.split("-", 1)[0]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entry_points(dist: _Dist) -> str:
    return dist.read("entry_points.txt")


def _used(name: str, dist: _Dist, words: set[str]) -> bool:
    """A command word names the distribution, a module it installs or a console script."""
    if name in words or name.replace("-", "_") in words:
        return True
    tops = {line.strip().lower() for line in dist.read("top_level.txt").splitlines()}
    scripts = re.findall(
        r"^\s*([\w.+-]+)\s*=", _section(_entry_points(dist), "console_scripts"), re.MULTILINE
    )
    return bool((tops | {s.lower() for s in scripts}) & words)


def _section(text: str, name: str) -> str:
    match = re.search(rf"^\[{name}\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def _required(names: set[str], dists: Mapping[str, _Dist]) -> set[str]:
    """``names`` and every installed distribution they require, transitively
    (a requirement only for an extra is left out)."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen or name not in dists:
            continue
        seen.add(name)
        for line in re.findall(
            r"^Requires-Dist:\s*(.+)$", dists[name].read("METADATA"), re.MULTILINE
        ):
            requirement, _, marker = line.partition(";")
            if "extra" not in marker:
                todo.append(_normal(re.split(r"[\s\[<>=!~(]", requirement.strip(), 1)[0]))
    return seen


def _files(dist: _Dist) -> dict[str, str]:
    """sha256 of the files RECORD lists and of every file in the package
    directories it names (bytecode caches left out)."""
    site = str(dist.site)
    record = dist.record()
    paths = {os.path.normpath(os.path.join(site, rel)) for rel in record}
    packages = {
        rel.split("/", 1)[0]
        for rel in record
        if "/" in rel
        and not rel.startswith("..")
        and not rel.split("/", 1)[0].endswith(".dist-info")
    }
    for package in packages:
        for here, dirs, files in os.walk(os.path.join(site, package)):
            dirs[:] = [d for d in dirs if d not in ROUTINE]
            paths.update(os.path.join(here, name) for name in files)
    kept = [p for p in sorted(paths) if f"{os.sep}__pycache__{os.sep}" not in p]
    return {path: _sha256(path) for path in kept[:MAX_FILES]}


def _own_files() -> dict[str, str]:
    """sha256 of every file of stepkit's own packages where this process
    imports them from (an editable install's RECORD does not list them)."""
    import importlib.util

    import stepkit

    # where the built-ins' package is, without importing it (the core reaches plugins by hooks)
    spec = importlib.util.find_spec("stepkit.plugins")
    plugins = list(spec.submodule_search_locations or []) if spec is not None else []
    found: dict[str, str] = {}
    for package in dict.fromkeys([*stepkit.__path__, *plugins]):
        for here, dirs, files in os.walk(package):
            dirs[:] = [d for d in dirs if d not in ROUTINE]
            for name in files:
                path = os.path.join(here, name)
                found[path] = _sha256(path)
    return found


#: path → the file's identity when it was hashed (device, inode, size,
#: modification and change times) and its sha256.
_DIGESTS: dict[str, tuple[tuple[int, ...], str]] = {}
#: How many digests :func:`_sha256` has kept in this process.
_hashed = 0
#: The records (:func:`_record_path`) this process has read into :data:`_DIGESTS`.
_LOADED: set[Path] = set()
_SAVING = threading.Lock()
#: How long ago a file must have changed for its digest to be kept: a write
#: within the same tick of the kernel's coarse clock as an earlier one leaves
#: its times as they were (git's "racily clean" entries), so a file that
#: changed this recently is read again at every fingerprint.
SETTLED_NS = 2_000_000_000


def _sha256(path: str) -> str:
    """The file's sha256, read again only when the file may have changed.

    A run fingerprints the same few hundred files at its start and at every
    gate, and each run of the project the same again.  Whatever writes a
    file, or renames another over it, moves its change time, which no
    process but a privileged one can set back; a file whose identity
    (:data:`_DIGESTS`) is the one it had when it was read, long enough ago
    (:data:`SETTLED_NS`), holds what it held then."""
    global _hashed
    try:
        stat = os.stat(path)
    except OSError:
        return "missing"
    identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    kept = _DIGESTS.get(path)
    if kept is not None and kept[0] == identity:
        return kept[1]
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return "missing"
    if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) > SETTLED_NS:
        _DIGESTS[path] = (identity, digest.hexdigest())
        _hashed += 1
    return digest.hexdigest()


def _record_path(site_dirs: Iterable[str]) -> Path:
    """Where the digests of a fingerprint of ``site_dirs`` are kept between
    processes: under stepkit's state directory, which no confined command
    sees (:mod:`stepkit.workspace.sandbox`), one record per set of site
    directories (projects of other virtualenvs do not overwrite it)."""
    key = hashlib.sha256("\0".join(site_dirs).encode("utf-8", "surrogateescape")).hexdigest()
    return state_home() / "installed" / f"{key[:24]}.json"


def _load_kept(record: Path) -> None:
    """The digests an earlier process kept in ``record``, into
    :data:`_DIGESTS`, once per process: only a record whose seal verifies
    (:mod:`stepkit.workspace.seal`) and whose every entry is well formed is
    believed; anything else is read as no record (every file is hashed)."""
    if record in _LOADED:
        return
    _LOADED.add(record)
    try:
        entries = json.loads(read_sealed(record))["digests"]
        kept = {
            path: ((dev, ino, size, mtime, ctime), digest)
            for path, (dev, ino, size, mtime, ctime, digest) in entries.items()
            if all(type(n) is int for n in (dev, ino, size, mtime, ctime))
            and isinstance(digest, str)
        }
    except (OSError, SealBroken, ValueError, KeyError, TypeError, AttributeError):
        return
    if len(kept) == len(entries):
        for path, entry in kept.items():
            _DIGESTS.setdefault(path, entry)


def _save_kept(record: Path, found: Mapping[str, str]) -> None:
    """Keep the digests of the files of ``found`` in ``record``, sealed, for
    the next process; a record that cannot be written is no record."""
    entries = {p: [*_DIGESTS[p][0], _DIGESTS[p][1]] for p in found if p in _DIGESTS}
    with _SAVING, contextlib.suppress(OSError):
        write_sealed(record, json.dumps({"digests": entries}))
