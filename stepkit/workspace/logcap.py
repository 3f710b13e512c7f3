"""The middle of a big output, cut from its log: only the lines naming a
failure are kept, then the tail.

Once a command's log holds its head (half of the cap, ``[logs] max_mb``),
what follows is no longer masked and written as it comes: masking is most of
what a big output costs, and text that is not kept cannot leak.  The raw
output is held in a rolling tail of :data:`TAIL_BYTES` plus a look-behind;
what rolls out of it is the cut middle: its lines that may name a failure
(:func:`stepkit.workspace.faults.failure_lines`) are masked and written, up
to the cap, the rest only counted.  When the command ends the tail is masked
(the look-behind lets a secret or a key block that reaches into it be seen
whole) and written after a marker saying what was cut.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from stepkit.workspace.faults import failure_lines
from stepkit.workspace.redact import Redactor, redact

#: Bytes of the end of the output a capped log keeps (a quarter of the cap at most).
TAIL_BYTES = 2 * 1024 * 1024
#: Raw bytes kept before the tail, only looked at when it is masked: more
#: than any secret shape reaches (a PEM block, a long token).
LOOK_BEHIND = 128 * 1024
#: Bytes of the log left for the two markers.
_MARKERS = 1024
#: Bytes of a cut line kept when it is a failure line (the rest is dropped).
LINE_BYTES = 4096


class LogCut:
    """The output past the head of a capped log.

    :param cap: the most bytes the log keeps, about.
    :param written: bytes of the log written so far (its head).
    :param emit: writes a block to the log (masked text only; ``counted``:
        it is output, so its lines count).
    :param pending: output fed but not yet masked, from a line start or a
        cut no secret straddles.
    """

    def __init__(self, cap: int, written: int, emit: Callable[[bytes, bool], None], pending: bytes):
        self._tail_bytes = min(TAIL_BYTES, cap // 4)
        self._room = cap - written - self._tail_bytes - _MARKERS
        self._emit = emit
        self._raw: deque[bytes] = deque([pending] if pending else [])
        self._raw_size = len(pending)
        self.last_byte = pending[-1:]  # of the output so far
        self._line = b""  # the start of a cut line whose newline has not come yet
        self.bytes = self.lines = 0
        self._kept = 0
        self._dropped_failures = False
        self._many = False  # most lines of the last chunk named a failure

    def feed(self, data: bytes) -> None:
        """Take the next raw chunk."""
        self._raw.append(data)
        self._raw_size += len(data)
        self.last_byte = data[-1:]
        while self._raw and self._raw_size - len(self._raw[0]) >= self._tail_bytes + LOOK_BEHIND:
            chunk = self._raw.popleft()
            self._raw_size -= len(chunk)
            self._cut(chunk)

    def close(self) -> bytes:
        """Write the failure lines still to come and the marker; return the
        masked tail (output: the caller writes and keeps it)."""
        raw = b"".join(self._raw)
        self._raw.clear()
        text = raw.decode("utf-8", "surrogateescape")
        at = len(raw[: max(0, len(raw) - self._tail_bytes)].decode("utf-8", "surrogateescape"))
        start, tail = Redactor().mask_tail(text, at)
        self._cut(text[:start].encode("utf-8", "surrogateescape"), last=True)
        dropped = (
            "; later lines naming a failure were cut too (the cap was reached)"
            if self._dropped_failures
            else ""
        )
        self._note(
            f"[stepkit: {self.bytes} bytes ({self.lines} lines) of output cut here, "
            f"all but the {self._kept} lines above naming a failure{dropped}; "
            "the end of the output follows]"
        )
        return tail.encode("utf-8", "surrogateescape")

    def _cut(self, chunk: bytes, last: bool = False) -> None:
        """Count ``chunk`` as cut; write its lines that name a failure."""
        newlines = chunk.count(b"\n")
        self.bytes += len(chunk)
        self.lines += newlines
        if self._room <= 0:
            self._line = b""
            return
        newline = chunk.rfind(b"\n")
        if newline == -1:
            self._line = (self._line + chunk)[:LINE_BYTES] if not last else b""
            return
        lines = self._line + chunk[: newline + 1]
        self._line = chunk[newline + 1 : newline + 1 + LINE_BYTES] if not last else b""
        found = failure_lines(lines, many=self._many)
        # most lines of the next chunk name a failure when most of this one's did
        self._many = 2 * len(found) > newlines
        if not found:
            return
        if max(map(len, found)) > LINE_BYTES:
            found = [line[:LINE_BYTES] for line in found]
        # decoded as one text: a line's broken UTF-8 ends at its newline either way
        masked = redact(b"\n".join(found).decode("utf-8", "surrogateescape"))
        block = masked.encode("utf-8", "surrogateescape") + b"\n"
        if len(block) > self._room:
            block = block[: block.rfind(b"\n", 0, self._room) + 1]
            self._dropped_failures = True
        self._room = 0 if self._dropped_failures else self._room - len(block)
        self._kept += block.count(b"\n")
        if block:
            self._emit(block, False)

    def _note(self, line: str) -> None:
        self._emit(f"{line}\n".encode(), False)


def opening(cap: int) -> bytes:
    """The marker written where the log's head ends."""
    return (
        f"[stepkit: this log keeps {cap} bytes at most ([logs] max_mb): past this line "
        "only the lines naming a failure are kept, then the end of the output]\n"
    ).encode()
