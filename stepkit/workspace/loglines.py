"""A gate's output as lines read from its log as a stream, so parsing the
output of a command that printed gigabytes holds one line at a time.

A line longer than :data:`MAX_LINE_CHARS` is cut to that length (the rest of
it is skipped, never held): a single line of hundreds of megabytes without a
newline stays bounded too.  When the log cannot be read, the lines of the
output kept in memory (its head and tail) stand in for it; a log that
``stepkit gc`` compressed is read from its ``.gz``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

#: Characters of one line kept for parsing; the rest of a longer line is skipped.
MAX_LINE_CHARS = 1 << 20


class LogLines:
    """The lines of ``log`` (without their newline), read afresh on every
    iteration; ``kept`` (the output held in memory) when the log is gone."""

    def __init__(self, log: str | Path | None, kept: str = ""):
        self.log = Path(log) if log else None
        self.kept = kept

    def __iter__(self) -> Iterator[str]:
        if self.log is not None:
            try:
                stream = _open(self.log)
            except OSError:
                pass
            else:
                with stream:
                    yield from _bounded_lines(stream)
                return
        yield from self.kept.splitlines()


def _open(log: Path) -> IO[str]:
    """The log as text; gzipped (``<log>.gz``) once its run was kept by ``stepkit gc``."""
    packed = log.with_name(log.name + ".gz")
    if not log.exists() and packed.exists():
        return gzip.open(packed, "rt", encoding="utf-8", errors="replace", newline="")
    return log.open(encoding="utf-8", errors="replace", newline="")


def lines_of(output: str | Iterable[str]) -> Iterable[str]:
    """``output``'s lines: a string split, anything else (:class:`LogLines`) as it is."""
    return output.splitlines() if isinstance(output, str) else output


def _bounded_lines(stream) -> Iterator[str]:
    while True:
        line = stream.readline(MAX_LINE_CHARS)
        if not line:
            return
        if line[-1] not in "\r\n":
            rest = line
            while rest and rest[-1] not in "\r\n":  # skip the rest of an over-long line
                rest = stream.readline(MAX_LINE_CHARS)
        yield line.rstrip("\r\n")
