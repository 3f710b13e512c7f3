"""The opt-in comparison of ``stepkit verify`` with real projects' CI: it runs
only with ``STEPKIT_REALREPOS=DIR`` naming where the projects' repositories
are (``STEPKIT_REALREPOS=DIR pytest -m realrepos tests/realrepos``), and needs
the package registries and the projects' toolchains."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("STEPKIT_REALREPOS"):
        return
    skip = pytest.mark.skip(
        reason="the real-repository comparison is opt-in: set STEPKIT_REALREPOS to their directory"
    )
    for item in items:
        if "realrepos" in item.keywords:
            item.add_marker(skip)
