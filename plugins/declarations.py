"""The declarations of a package with one module per tool: each module
names what it declares in one attribute (``RUNNERS``, ``TOOLS``), and the
package gathers them module by module, in the modules' names' order, so a
new tool is one module more and nothing lists it."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any


def declared_in(package: str, path: Iterable[str], attribute: str) -> list[Any]:
    """Every ``attribute`` of the public modules of ``package`` (found at
    ``path``, the package's ``__path__``), concatenated by module name."""
    found: list[Any] = []
    for module in sorted(m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")):
        found.extend(getattr(importlib.import_module(f"{package}.{module}"), attribute))
    return found
