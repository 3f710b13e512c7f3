"""Top-level pytest configuration shared by every test directory."""

import os

import pytest

from tests.support.e2e import DEVELOPER_PREFIXES, GATE_VARIABLES

# Loaded here, before any test module imports them, so pytest can rewrite
# their asserts; test modules use the fixtures without declaring them.
pytest_plugins = ["stepkit.testing", "tests.support.messages_api"]


@pytest.fixture(autouse=True)
def _isolate_environment(monkeypatch, tmp_path_factory):
    """Tests never see the developer's keys, overrides or plugin allow-list,
    and never write stepkit's state (locks, secret) into the developer's."""
    for name in list(os.environ):
        if name.startswith(DEVELOPER_PREFIXES) or name in GATE_VARIABLES:
            monkeypatch.delenv(name, raising=False)
    # what stepkit keeps outside the project (trusted plugins, the record key, locks)
    # stays in the test's own dir
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    # a pytest the test starts makes its numbered temp dirs here, and cleans
    # only here: under the shared /tmp/pytest-of-<user> it would delete the
    # trees earlier suites left, for as long as that takes
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(tmp_path_factory.mktemp("pytest-temproot")))
