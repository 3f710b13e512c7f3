"""How the run of an external coder or reviewer (a command or a preset's
CLI) is judged: the last line of its output that starts with a sentinel
(:func:`find_sentinel`, the one reader of a sentinel), else its exit code,
and the usage it reported in ``STEPKIT_USAGE_FILE``.

The command coder (:mod:`stepkit.plugins.coders.command`) and the presets
(:mod:`stepkit.plugins.coders.presets`) both read a run with these rules,
so both import this module and neither imports the other for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stepkit.lazyregex import lazy_compile
from stepkit.records import CoderResult, CoderSentinel, Usage

if TYPE_CHECKING:
    from stepkit.workspace.process import ProcessResult

#: A sentinel line: the sentinel first (after markdown: ``**``, ``>``, ``#``, a
#: bullet, a backtick), then nothing, or a reason after a separator.
_SENTINEL_LINE = lazy_compile(
    r"^[\s*`_>#-]*(CODER_COMPLETE|CODER_REJECTED|CODER_FAILED)(?![A-Za-z0-9_])[*`_]*"
    r"[\s.!:;,\-\u2013\u2014]*(.*?)\s*$"
)


@dataclass(frozen=True)
class Sentinel:
    """A coder's sentinel line: the sentinel and the reason after it (None: none)."""

    word: CoderSentinel
    reason: str | None = None


class SentinelWatch:
    """An ``on_text`` callback for :func:`stepkit.workspace.process.run`: remembers the
    last sentinel line of the whole stream."""

    def __init__(self) -> None:
        self.last: Sentinel | None = None

    def __call__(self, text: str) -> None:
        self.last = find_sentinel(text) or self.last


def find_sentinel(text: str) -> Sentinel | None:
    """The last line of ``text`` that starts with a sentinel, with its reason:
    ``CODER_FAILED: tests still red``, ``**CODER_REJECTED** - out of scope``.
    Whatever follows that line never overrides it; a later sentinel line does."""
    found = None
    for line in text.splitlines():
        match = _SENTINEL_LINE.match(line)
        if match:
            word, reason = match.groups()
            found = Sentinel(word, reason or None)  # type: ignore[arg-type]
    return found


def reported_usage(run: ProcessResult) -> Usage | None:
    """What a command wrote to its ``STEPKIT_USAGE_FILE``; None when it wrote
    nothing readable."""
    if not run.log:
        return None
    path = Path(run.log).with_name(Path(run.log).stem + "-usage.json")
    try:
        return Usage.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def generic_result(run: ProcessResult, found: Sentinel | None) -> CoderResult:
    """The command-coder rules: crash, else ``found`` (the last sentinel line
    in the stream), else exit code; the usage the command reported."""
    usage = reported_usage(run)
    cost = usage.cost_usd if usage is not None else None
    crash = run.crash("the coder")
    if crash:
        return CoderResult(
            crashed=True,
            text=_join(run.output, crash),
            exit_code=run.exit_code,
            log=run.log,
            usage=usage,
            cost_usd=cost,
        )
    note = None
    inferred = found is None
    if found is None:
        found = Sentinel("CODER_COMPLETE" if run.exit_code == 0 else "CODER_FAILED")
        note = f"[stepkit: no sentinel in the output; exit code {run.exit_code} -> {found.word}]"
    return CoderResult(
        sentinel=found.word,
        sentinel_reason=found.reason,
        sentinel_inferred=inferred,
        text=_join(run.output, note),
        exit_code=run.exit_code,
        log=run.log,
        usage=usage,
        cost_usd=cost,
    )


def _join(*parts: str | None) -> str:
    return "\n".join(p.rstrip("\n") for p in parts if p)
