"""The tree's listing as git gives it (:data:`LISTING`) and what it says
(:func:`parse_listing`): read by :mod:`stepkit.workspace.scope.git`, and
compared by a verify's head start (:mod:`stepkit.workspace.headstart`),
which imports nothing that spawns git."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from stepkit.workspace.scope.virtualenvs import Inside

GITLINK = b"160000"  # the index mode of a submodule


def text(data: bytes) -> str:
    """What git wrote (its output, a file of its own), as stepkit holds it."""
    return data.decode("utf-8", "surrogateescape")


class Index(NamedTuple):
    """What the index knows of a directory's files (paths relative to it)."""

    #: path → id of the files whose bytes match the index (a submodule: its recorded commit)
    ids: dict[str, str]
    #: the paths whose bytes differ from the index, or that are untracked and not ignored
    dirty: set[str]
    #: the submodules (gitlinks) among the paths
    submodules: list[str]


#: The listing of the tree (:func:`~stepkit.workspace.scope.git.index_ids`); -t tags each entry: H cached,
#: C changed, R removed, M unmerged, ? other.
LISTING = ["ls-files", "-z", "-t", "-s", "-m", "-d", "-o", "--exclude-standard"]


def parse_listing(out: bytes, directory: Path) -> Index:
    """What :data:`LISTING`'s output ``out`` says of ``directory``'s files."""
    ids: dict[str, str] = {}
    dirty: set[str] = set()
    gitlinks: list[str] = []
    in_virtualenv = Inside(directory)
    for entry in out.split(b"\0"):
        tag, _, rest = entry.partition(b" ")
        meta, tab, name = rest.partition(b"\t")
        if not tab:
            if tag == b"?" and not in_virtualenv(text(rest)):
                dirty.add(text(rest))
            continue
        rel = text(name)
        mode, oid = meta.split()[:2]
        if mode == GITLINK:
            if rel not in gitlinks:
                gitlinks.append(rel)
            ids[rel] = text(oid)
        elif tag in (b"C", b"R", b"M"):
            dirty.add(rel)
        else:
            ids[rel] = text(oid)
    for rel in dirty:
        ids.pop(rel, None)
    return Index(ids, dirty, gitlinks)
