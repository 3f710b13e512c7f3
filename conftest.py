"""Top-level pytest configuration shared by every test directory."""

import os

import pytest


@pytest.fixture(autouse=True)
def _isolate_environment(monkeypatch, tmp_path_factory):
    """Tests never see the developer's keys, overrides or plugin allow-list."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "STEPKIT_", "STEP_", "CODER_")) or name in (
            "FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD",
        ):
            monkeypatch.delenv(name, raising=False)
