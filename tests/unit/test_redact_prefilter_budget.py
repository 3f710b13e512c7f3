"""When a process builds the RE2 prefilter of secret masking: after 256 KB of
commands' output (masked as the command runs, while stepkit waits for it),
or once masking whole texts without it has cost about what building it costs
(ski rental), never before.

A run masks a few hundred kilobytes of whole texts (its checkpoint's parts,
the installed files' fingerprint, its events, the handoff's prompt): building
the set for that (about 50 ms, in the node that crossed the line) saved a few
milliseconds of masking."""

from __future__ import annotations

import pytest

from stepkit.workspace import redact

#: the kind of text a run masks: paths and digests, test output
FINGERPRINT_LINE = '"/venv/lib/python3.11/site-packages/pkg/mod.py": "' + "ab12" * 16 + '",\n'
LOG_LINE = "tests/test_api.py::test_token_refresh PASSED [ 12%]\n"


@pytest.fixture
def fresh_process(monkeypatch):
    """This process as a new one: no prefilter yet, nothing masked; the builds counted."""
    built: list[int] = []
    monkeypatch.setattr(redact, "_prefilter_set", None)
    monkeypatch.setattr(redact, "_plain_left", redact.PLAIN_CHARS)
    monkeypatch.setattr(redact, "_text_left", redact.TEXT_PLAIN_CHARS)
    real = redact._prefilter

    def counted():
        if redact._prefilter_set is None:
            built.append(1)
        return real()

    monkeypatch.setattr(redact, "_prefilter", counted)
    return built


def test_a_run_s_worth_of_masking_builds_no_prefilter(fresh_process):
    redact.redact(FINGERPRINT_LINE * 2500)  # the installed files' fingerprint, ~200 KB
    for _ in range(300):  # events, settings, prompts
        redact.redact(LOG_LINE * 20)
    assert fresh_process == []


def test_a_command_s_output_past_256_kb_builds_it_as_it_is_masked(fresh_process):
    redactor = redact.Redactor()
    for _ in range(redact.PLAIN_CHARS // len(LOG_LINE * 20)):
        redactor.feed(LOG_LINE * 20)
    assert fresh_process == []
    for _ in range(2):
        redactor.feed(LOG_LINE * 20)
    assert fresh_process == [1]


def test_whole_texts_past_what_the_build_costs_build_it_once(fresh_process):
    chunk = LOG_LINE * 2000
    for _ in range(redact.TEXT_PLAIN_CHARS // len(chunk) + 2):
        redact.redact(chunk)
    assert fresh_process == [1]
