"""The opt-in suite of the real coding CLIs: it runs only with
``STEPKIT_REALCLI=1`` (``STEPKIT_REALCLI=1 pytest -m realcli tests/realcli``),
installs the CLIs into a cache dir (``STEPKIT_REALCLI_CACHE``) and needs npm,
the package registries and, for Claude Code's own sandbox, socat."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.realcli.harness import install


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("STEPKIT_REALCLI") == "1":
        return
    skip = pytest.mark.skip(reason="the real-CLI suite is opt-in: set STEPKIT_REALCLI=1")
    for item in items:
        if "realcli" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cli_bin():
    """``cli_bin(name)``: the directory of the installed CLI (installed once)."""
    installed: dict[str, object] = {}

    def get(name: str):
        if name not in installed:
            try:
                installed[name] = install(name)
            except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                detail = getattr(exc, "stderr", b"") or b""
                installed[name] = f"{exc} {detail.decode(errors='replace')[-500:]}"
        if not hasattr(installed[name], "is_dir"):
            pytest.fail(f"could not install {name}: {installed[name]}")
        return installed[name]

    return get
