"""Regular expressions compiled on first use, so that importing a module
with dozens of them costs nothing until one is searched with.

A leaf module (it imports nothing of stepkit).
"""

from __future__ import annotations

import re
from typing import Any, cast


class LazyPattern:
    """Stands in for ``re.compile(pattern, flags)``: the first use of one of
    its attributes (``search``, ``match``, ``groupindex`` …) compiles the
    pattern and keeps that attribute, so later calls go straight to the
    compiled pattern's method.  ``pattern`` is the source, as on a compiled
    pattern, and reading it compiles nothing."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # copy, pickle and friends probe for these
        value = getattr(re.compile(self.pattern, self._flags), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self._flags})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled when first used (see :class:`LazyPattern`)."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))
