"""Variants of a whole-step test: one in the default suite, the rest slow.

A whole-step run costs seconds; a test repeated over many variants (the
hostile coder's tricks, the characters that try to forge a sentinel, each
stop signal) keeps its first variant in the default suite, so what it
checks is still checked there, and marks the others ``slow``: CI runs them
(``-m "slow or bench"``, tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest


def first_by_default(values: Iterable[Any], *, several: bool = False) -> list[Any]:
    """``values`` for ``pytest.mark.parametrize``, every one after the first
    marked slow (``several``: each value is a tuple of the test's arguments).
    The ids stay the ones pytest gives ``values``."""
    first, *rest = values
    return [
        first,
        *(
            pytest.param(*(value if several else (value,)), marks=pytest.mark.slow)
            for value in rest
        ),
    ]
