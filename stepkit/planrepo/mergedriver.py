"""The plan repo's git merge driver: merges of NOTES.md and step files that
keep every branch's appended facts and Edge-cases annotations.

:func:`merge_plan_file` runs git's own three-way merge first
(:func:`stepkit.workspace.scope.git.merge_file`).  Of the hunks that still
conflict, only those that lie in an appendable place and that only add lines
(each side keeps every line of the base, in order) are resolved, as a union
that keeps every added line: at each place between the hunk's base lines,
our added block, then theirs (once when the two blocks are the same, the
same fact appended twice).  A line of theirs equal to one of ours is still
kept: a note repeated under two headings, or a code fence, is content, not a
duplicate.  One structure is merged rather than doubled: a step file whose
Edge cases section both sides created gets it once, both sides' bullets
under it (the plan reader reads only the first section of a name, so a
second one would hide its annotations).  Appendable
places are NOTES.md outside its frontmatter (stepkit appends facts there,
:mod:`stepkit.protocol.handoff.notes`) and a step file's Edge cases section
(where :func:`stepkit.planrepo.edits.append_edge_case` adds annotations).
Every other conflict (a frontmatter ``status:``, a step's body, a fact one
branch rewrote) is left with its diff3 markers for the user.

Registering the driver with git is :mod:`stepkit.planrepo.mergesetup`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from stepkit.planrepo.edits import frontmatter_span
from stepkit.planrepo.sections import heading_of, section_key, section_span, split_lines
from stepkit.workspace.files import atomic_write
from stepkit.workspace.scope import git

#: The labels of the three sides in the conflict markers this driver leaves.
LABELS = ("ours", "base", "theirs")
_MARKERS = tuple(f"{sign * 7} {label}" for sign, label in zip("<|>", LABELS))
_SEPARATOR = "=" * 7
#: the marker that ends each part of a conflict, by how many markers came before it
_NEXT_MARKER = {1: _MARKERS[1], 2: _SEPARATOR, 3: _MARKERS[2]}


class MergeDriverError(Exception):
    """git could not merge the three files at all (git missing, a binary file)."""


@dataclass
class _Conflict:
    ours: list[str] = field(default_factory=list)
    base: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)
    #: the four marker lines as git wrote them (their line endings kept)
    markers: list[str] = field(default_factory=list)

    def rendered(self) -> list[str]:
        """The hunk with its diff3 markers, as git left it."""
        start, base, separator, end = self.markers
        return [start, *self.ours, base, *self.base, separator, *self.theirs, end]


def merge_plan_file(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """Merge ``theirs`` into ``ours`` (git's %O %A %B %P), writing the result
    into ``ours``; ``path`` is the file's path in the repository, which says
    where appends are allowed.

    :return: the number of conflicts left (0: merged cleanly).
    :raises MergeDriverError: git could not merge the files (``ours`` unchanged).
    """
    merged = git.merge_file(ours, base, theirs, LABELS)
    if merged is None:
        raise MergeDriverError(
            f"{path}: git merge-file could not merge it (binary, or git missing)"
        )
    data, conflicts = merged
    if conflicts:
        text, conflicts = resolve_appends(data.decode("utf-8", "surrogateescape"), path)
        data = text.encode("utf-8", "surrogateescape")
    atomic_write(ours, data)
    return conflicts


def resolve_appends(merged: str, path: str) -> tuple[str, int]:
    """``merged`` (git's diff3 output) with its appendable conflicts resolved
    as unions; the text and the number of conflicts left."""
    segments = _segments(merged)
    if segments is None:
        return merged, 1
    views = [_view(segments, side) for side in ("ours", "theirs")]
    kind = _kind(path)
    out: list[str] = []
    index = left = 0
    for segment in segments:
        if not isinstance(segment, _Conflict):
            out.append(segment)
            continue
        if kind and _only_adds(segment) and all(_appendable(kind, *view, index) for view in views):
            out += _union(segment, kind)
        else:
            out += segment.rendered()
            left += 1
        index += 1
    return "".join(out), left


def _kind(path: str) -> str | None:
    """``notes`` or ``step`` by where the file is in the plan repo, else None."""
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.name == "NOTES.md":
        return "notes"
    if posix.parent.name == "steps" and posix.suffix == ".md":
        return "step"
    return None


def _segments(merged: str) -> list[str | _Conflict] | None:
    """The merged text as plain lines and conflicts; None when its markers
    are not git's (a conflict not closed)."""
    segments: list[str | _Conflict] = []
    current: _Conflict | None = None
    part: list[str] = []
    for line in split_lines(merged):
        bare = line.rstrip("\r\n")
        if current is None and bare == _MARKERS[0]:
            current = _Conflict(markers=[line])
            part = current.ours
        elif current is not None and bare == _NEXT_MARKER[len(current.markers)]:
            current.markers.append(line)
            if len(current.markers) == 4:
                segments.append(current)
                current = None
            else:
                part = current.base if len(current.markers) == 2 else current.theirs
        elif current is not None:
            part.append(line)
        else:
            segments.append(line)
    return None if current is not None else segments


def _view(segments: list[str | _Conflict], side: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The file as ``side`` sees it (every conflict taken from that side) and
    the (start, end) line range of each conflict's lines in it."""
    lines: list[str] = []
    ranges: list[tuple[int, int]] = []
    for segment in segments:
        if isinstance(segment, _Conflict):
            chunk = getattr(segment, side)
            ranges.append((len(lines), len(lines) + len(chunk)))
            lines += chunk
        else:
            lines.append(segment)
    return lines, ranges


def _appendable(kind: str, lines: list[str], ranges: list[tuple[int, int]], index: int) -> bool:
    """Whether every non-blank line of conflict ``index`` lies where stepkit
    appends, in one side's view of the file (:func:`_view`)."""
    start, end = ranges[index]
    frontmatter = frontmatter_span(lines)
    body_start = frontmatter[1] + 1 if frontmatter else 0
    if start < body_start:
        return False
    if kind == "notes":
        return True
    section = section_span(lines, body_start, "Edge cases")
    if section is None:
        return False
    first, last = section
    return all(first <= i < last for i in range(start, end) if lines[i].strip())


def _only_adds(conflict: _Conflict) -> bool:
    """Each side kept every base line, in order (it only added lines)."""
    return all(_subsequence(conflict.base, side) for side in (conflict.ours, conflict.theirs))


def _subsequence(needle: list[str], haystack: list[str]) -> bool:
    return _gaps(needle, haystack) is not None


def _gaps(base: list[str], side: list[str]) -> list[tuple[list[str], str | None]] | None:
    """``side`` cut at the base lines it kept: for each base line, the block
    ``side`` added before it and its own copy of it, then the block after
    the last (its line None).  Base lines match leftmost, line endings
    aside; None when ``side`` dropped or changed a base line."""
    gaps: list[tuple[list[str], str | None]] = []
    block: list[str] = []
    wanted = iter(base)
    target = next(wanted, None)
    for line in side:
        if target is not None and _bare(line) == _bare(target):
            gaps.append((block, line))
            block = []
            target = next(wanted, None)
        else:
            block.append(line)
    gaps.append((block, None))
    return gaps if target is None else None


def _union(conflict: _Conflict, kind: str) -> list[str]:
    """The hunk with both sides' additions: before each of its base lines
    and after the last, our added block, then theirs unless it is the same
    block (the same fact appended twice); in a step file, their block
    without the heading when both blocks open the same section."""
    ours = _gaps(conflict.base, conflict.ours) or []
    theirs = _gaps(conflict.base, conflict.theirs) or []
    newline = next(
        (
            line[len(line.rstrip("\r\n")) :]
            for line in conflict.ours + conflict.theirs
            if line.endswith("\n")
        ),
        "\n",
    )
    chunks: list[str] = []
    for (mine, kept), (other, _) in zip(ours, theirs):
        chunks += mine
        if list(map(_bare, other)) != list(map(_bare, mine)):
            chunks += _section_body(other, mine) if kind == "step" else other
        if kept is not None:
            chunks.append(kept)
    lines: list[str] = []
    for line in chunks:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        lines.append(line)
    return lines


def _section_body(block: list[str], other: list[str]) -> list[str]:
    """``block`` less its opening heading (and the blank lines about it) when
    ``other`` opens with the same heading, else all of ``block``."""

    def opening(lines: list[str]) -> tuple[tuple[int, str] | None, int]:
        index = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
        found = heading_of(lines[index]) if index < len(lines) else None
        return (found[0], section_key(found[1])) if found else None, index

    heading, index = opening(block)
    if heading is None or heading != opening(other)[0]:
        return block
    rest = block[index + 1 :]
    while rest and not rest[0].strip():
        rest = rest[1:]
    return rest


def _bare(line: str) -> str:
    return line.rstrip("\r\n")
