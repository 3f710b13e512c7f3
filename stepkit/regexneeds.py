"""The plain text every match of a regular expression holds, found from the
pattern's parse: ``^=*\\s*no tests ran(?: in [\\d.]+s)?`` cannot match a text
that lacks ``no tests ran``, which ``in`` answers at memory speed, where the
regex engine would try the pattern at every character of it.

Conservative: a pattern whose parse holds anything this does not follow
(case-insensitive parts, a branch with no literal) needs nothing, and is
always searched; so is every pattern on a Python whose ``re`` package has
no ``_parser`` (a private module: its absence costs speed, never a verdict).  A leaf module (it imports nothing of stepkit).
"""

from __future__ import annotations

import functools
import re

try:  # the standard library's own parser (3.11 on): private, so its absence costs speed only
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python without them: every pattern is searched
    _parser = None

#: Alternatives of which every match holds at least one (empty: nothing is known).
Needs = tuple[str, ...]


@functools.lru_cache(maxsize=1024)
def needs(pattern: str, flags: int = 0) -> Needs:
    """Texts without a newline, of which every match of ``pattern`` holds one
    (empty: none is known, so any text may match)."""
    if _parser is None or flags & re.IGNORECASE:
        return ()
    try:
        parsed = _parser.parse(pattern, flags)
    except (re.error, TypeError, ValueError):
        return ()
    if parsed.state.flags & re.IGNORECASE:
        return ()
    return _of_sequence(list(parsed))


def _best(a: Needs, b: Needs) -> Needs:
    """Of two requirements, the one whose shortest alternative is longest."""
    if not a:
        return b
    if not b:
        return a
    return a if min(map(len, a)) >= min(map(len, b)) else b


def _of_run(run: list[str]) -> Needs:
    """A run of literal characters: its longest stretch without a newline
    (the searched text may join lines that are not neighbours)."""
    longest = max("".join(run).split("\n"), key=len)
    try:
        longest.encode()  # looked for in UTF-8 too (RE2): a lone surrogate is not
    except UnicodeEncodeError:
        return ()
    return (longest,) if longest else ()


def _of_sequence(items: list) -> Needs:
    best: Needs = ()
    run: list[str] = []
    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        best = _best(best, _of_run(run))
        run = []
        best = _best(best, _of_item(op, av))
    return _best(best, _of_run(run))


def _of_item(op, av) -> Needs:
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        return () if add_flags & re.IGNORECASE else _of_sequence(list(sub))
    if op is c.BRANCH:
        alternatives: list[str] = []
        for branch in av[1]:
            got = _of_sequence(list(branch))
            if not got:
                return ()
            alternatives.extend(got)
        return tuple(dict.fromkeys(alternatives))
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _of_sequence(list(av[2]))
    if op is c.ATOMIC_GROUP:
        return _of_sequence(list(av))
    return ()
