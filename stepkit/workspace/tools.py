"""What the core knows of a tool that is not a test runner, as its plugin declares it.

A :class:`Tool` (a linter, a type checker, a formatter, a package manager
…) says how to read its errors into keys
(file, rule, message; :mod:`stepkit.workspace.lintkeys`), the markers in a
source that silence it and the files that configure it (the tamper flags),
its own words for a cause outside the code (its fault signatures) and for
"nothing to format", and the lockfiles it writes.  Plugins give them
through ``stepkit_tools`` (``stepkit.plugins.tools`` holds one module per
built-in tool), as they give test runners
(:mod:`stepkit.workspace.runners`).

The core keeps the mechanisms and reads the declarations through the
:class:`Tools` table, each kind of pattern compiled into one: the failure
keys the baseline compares, the one-pass fault matcher, the tamper flags
and the lockfiles no gate may change.  No module of ``stepkit/workspace``
names a tool.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.diagnostics import Diagnostic

#: The built-in plugin whose tools a call without a plugin manager uses.
BUILTIN_TOOLS = "stepkit.plugins.tools"

#: The cause a fault signature names, from its match, the output's last lines
#: and the match's line among them; None when those lines lack the tool's
#: context for the message.
Cause = Callable[[re.Match[str], list[str], int], str | None]


@dataclass(frozen=True)
class Fault:
    """A tool's own message for a cause outside the code (an index it cannot
    reach, a command missing from its environment …).

    :ivar pattern: a line of the output's last lines (searched).
    :ivar cause: the one-line cause (:data:`Cause`).
    :ivar flags: the pattern's flags (``re.IGNORECASE``).
    """

    pattern: str
    cause: Cause
    flags: int = 0


@dataclass(frozen=True)
class Tool:
    """What stepkit knows about one tool other than a test runner.

    :param name: its name.
    :param before: tools whose declarations this one's are read before (its
        fault signatures are tried first).
    :param json_item: one item of the tool's JSON output read into its
        diagnostics; None: the item is not of its shape.
    :param heads: the head line of a diagnostic whose location is on a
        ``--> path:line:col`` line under it (groups ``code``, ``msg``, and
        ``level`` if it says one: else an error).
    :param rule_notes: a line within such a diagnostic that names its rule
        (group ``rule``) when the head does not.
    :param lines: a diagnostic on one line (groups ``file``, ``msg``, and
        ``level`` and ``rule`` if it says them: else an error without a rule).
    :param under_file: a diagnostic under a line naming its file alone
        (groups ``msg``, and ``level`` and ``rule`` if it says them).
    :param trailing_rules: the rule at the end of a ``path:line:col:
        message`` line (group ``rule``).
    :param silencers: (label, regex) of a marker in a source that silences
        the tool, which a step's change adding one flags.
    :param configs: regexes of the base names of its configuration files:
        a loosening change to one is flagged, and deleting one.
    :param shared_configs: regexes of the base names of files it shares with
        other settings (``pyproject.toml``): only its sections count there.
    :param sections: regexes of the names of its sections in those files.
    :param faults: its fault signatures, tried in order.
    :param nothing_to_format: its words (a regex of a line) for "no file to format".
    :param lockfiles: the names of the lockfiles it writes.
    :param caches: (variable, subdirectory) of each environment variable
        that moves its cache: a confined command's points into its private
        directory (:mod:`stepkit.workspace.sandbox`).
    :param per_file: its verdict on a file depends on that file and its
        configuration alone (a linter, not a type checker): a fix round may
        run it on the files that changed (:mod:`stepkit.workspace.narrowing`).
    :param invocations: the commands that run it on the paths after them
        (``ruff check``), their words joined by single spaces.
    :param file_kinds: the suffixes of the files it checks (``.py``).
    :param flags: its options that take no value (a path may follow them).
    :param explicit_files: the options that make it skip a file its
        configuration excludes even when the file is named on its command line.
    """

    name: str
    before: tuple[str, ...] = ()
    json_item: Callable[[dict[str, Any]], list[Diagnostic] | None] | None = None
    heads: tuple[str, ...] = ()
    rule_notes: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    under_file: tuple[str, ...] = ()
    trailing_rules: tuple[str, ...] = ()
    silencers: tuple[tuple[str, str], ...] = ()
    configs: tuple[str, ...] = ()
    shared_configs: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    faults: tuple[Fault, ...] = ()
    nothing_to_format: tuple[str, ...] = ()
    lockfiles: tuple[str, ...] = ()
    caches: tuple[tuple[str, str], ...] = ()
    per_file: bool = False
    invocations: tuple[str, ...] = ()
    file_kinds: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    explicit_files: tuple[str, ...] = ()


def after(lines: list[str], at: int, pattern: str, span: int = 8) -> re.Match[str] | None:
    """The first match of ``pattern`` in the ``span`` lines after ``at`` (for a
    :data:`Cause` reading the lines under its message)."""
    return next(
        (m for line in lines[at + 1 : at + 1 + span] if (m := re.search(pattern, line))), None
    )


def _any_of(patterns: Iterable[str], flags: int = re.MULTILINE) -> re.Pattern[str]:
    """One pattern matching any of ``patterns`` (one pass over a line)."""
    return lazy_compile("|".join(f"(?:{p})" for p in patterns) or r"(?!)", flags)


def _each(patterns: Iterable[str], flags: int = 0) -> tuple[re.Pattern[str], ...]:
    return tuple(lazy_compile(p, flags) for p in patterns)


class Tools:
    """The declared tools, in the order they are read, and the patterns of
    them all, each kind compiled into one (or kept in order where the first
    that matches decides)."""

    def __init__(self, declared: Iterable[Tool]):
        self.declared: tuple[Tool, ...] = tuple(_ordered(list(declared)))
        every = self.declared
        self.json_items = tuple(t.json_item for t in every if t.json_item)
        self.heads = _each(p for t in every for p in t.heads)
        self.rule_notes = _each(p for t in every for p in t.rule_notes)
        self.lines = _each(p for t in every for p in t.lines)
        self.under_file = _each(p for t in every for p in t.under_file)
        self.trailing_rules = _each(p for t in every for p in t.trailing_rules)
        self.silencers = tuple(
            (label, lazy_compile(pattern)) for t in every for label, pattern in t.silencers
        )
        self.faults = tuple(
            (lazy_compile(f.pattern, f.flags), f.cause) for t in every for f in t.faults
        )
        #: every fault signature in one pattern: a line it does not match is
        #: no signature's, and no rule is asked of it
        self.any_fault = _any_of(
            _unnamed(f"(?{_inline(f.flags)}:{f.pattern})" if f.flags else f.pattern)
            for t in every
            for f in t.faults
        )
        self.nothing_to_format = _any_of(p for t in every for p in t.nothing_to_format)
        self.lockfiles = tuple(dict.fromkeys(name for t in every for name in t.lockfiles))
        self.caches = dict(c for t in every for c in t.caches)


def _unnamed(pattern: str) -> str:
    """``pattern`` with its named groups unnamed (two signatures may name a
    group alike, which one pattern cannot)."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _inline(flags: int) -> str:
    """The inline letters of a fault signature's flags (``re.IGNORECASE``: ``i``)."""
    return "".join(
        letter
        for flag, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
        if flags & flag
    )


def _ordered(declared: list[Tool]) -> list[Tool]:
    """``declared`` in their order, but each tool before those it names in
    :attr:`Tool.before` (a stable sort: nothing else moves)."""
    ordered: list[Tool] = []
    for tool in declared:
        at = next((i for i, placed in enumerate(ordered) if placed.name in tool.before), None)
        ordered.insert(len(ordered) if at is None else at, tool)
    return ordered


def tools(pm: Any = None) -> Tools:
    """The tools the plugins of ``pm`` declare (``stepkit_tools``, the last
    registered first); ``pm`` None: the built-in ones.

    The built-in tools always count: a manager without their plugin gets
    them after its own, so that no choice of plugins weakens what a gate's
    output is judged by."""
    if pm is None:
        return builtin_tools()
    declared = [t for answer in pm.hook.stepkit_tools() for t in answer or ()]
    if pm.get_plugin(BUILTIN_TOOLS) is None:
        declared.extend(builtin_tools().declared)
    return Tools(declared)


def lockfile_names(pm: Any = None) -> tuple[str, ...]:
    """The names in :attr:`Tools.lockfiles` of :func:`tools` (``pm`` None: the
    built-in tools'), in no particular order, without importing the built-in
    tools: theirs are read from their modules' source
    (:mod:`stepkit.declsource`; imported when it does not tell), any other
    plugin's through its ``stepkit_tools``."""
    import importlib.util

    from stepkit.declsource import declared_values

    others: list[Tool] = []
    if pm is not None:
        builtin = pm.get_plugin(BUILTIN_TOOLS)
        ask = (
            pm.hook.stepkit_tools
            if builtin is None
            else pm.subset_hook_caller("stepkit_tools", remove_plugins=[builtin])
        )
        others = [t for answer in ask() for t in answer or ()]
    spec = importlib.util.find_spec(BUILTIN_TOOLS)
    where = spec.submodule_search_locations if spec else None
    read = declared_values(Path(where[0]), "TOOLS", "lockfiles") if where else None
    builtin_names = builtin_tools().lockfiles if read is None else read
    return tuple(dict.fromkeys([*(n for t in others for n in t.lockfiles), *builtin_names]))


@functools.cache
def builtin_tools() -> Tools:
    """The built-in tools, through the built-in plugin's hook (for a caller
    that has no plugin manager: the baseline's keys, the tamper flags)."""
    from stepkit.lazyplugins import builtin_plugin

    return Tools(builtin_plugin(BUILTIN_TOOLS).stepkit_tools())
