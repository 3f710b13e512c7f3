"""The hostile coder, through what a person is shown: it breaks the code,
hides a conftest that makes the broken code pass (a real tamper flag), and
names files with terminal escape sequences, carriage returns and bidi
overrides, which, written raw to a terminal, erase or move the flag's
line, and, carried raw in ``--json`` and in the MCP answer, do the same in
whatever client shows them.  Every string the coder, the model or the
project controls leaves stepkit visible (``\\x1b[2K``, ``\\r``, ``\\u202e``):
in the ``--json`` question, on a real terminal emulator, in the MCP answer
and in the handoff file.

Real pytest suites in tmp git repos, the real CLI and MCP server, the
command coder script of tests/support/e2e.py; the helpers of
tests/e2e/test_hostile_coder.py.
"""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_hostile_coder import BROKEN, MAKEREPORT, TEST_MUL, python_project
from tests.support.e2e import GOOD_MUL, PY, Project
from tests.support.tmux import Tmux

#: the flag's words, and where the question lists the flags
FLAG = "files git ignores were added or changed while the coder ran"
FLAGS_HEADING = "Tamper flags (signs that verification was weakened):"
ERASE_UP = "\x1b[2K\x1b[1A"
#: hidden files (under tests/, which the coder's tests/.gitignore hides): the tricks
ESCAPED_NAMES = {
    f"tests/{ERASE_UP * 3}(none)": "tests/\\x1b[2K\\x1b[1A",
    "tests/\rok": "tests/\\rok",
    "tests/\u202eyp.tsetnoc": "tests/\\u202eyp.tsetnoc",
}
#: variants no rule names: a line separator, a zero-width joiner inside a
#: flag word, an OSC 8 hyperlink
VARIANT_NAMES = {
    "tests/a\u2028b": "tests/a\\u2028b",
    "tests/ta\u200dmper": "tests/ta\\u200dmper",
    "tests/\x1b]8;;x:y\x07link\x1b]8;;\x07": "tests/\\x1b]8;;x:y\\x07link",
}
#: a tracked file the step adds (in the handoff's changed files) and readable names that stay as they are
TRACKED = {"docs/\x1b[2Kcafé-日本-🙂.md": "docs/\\x1b[2Kcafé-日本-🙂.md"}


def hidden_characters(text: str) -> list[str]:
    """The characters of ``text`` that a terminal obeys or hides instead of showing."""
    return [
        f"U+{ord(ch):04X}"
        for ch in text
        if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")
    ]


def hostile_project(tmp_path: Path) -> Project:
    """The coder breaks add, hides a conftest that makes it pass, and adds
    files with escape sequences in their names; its output has them too."""
    project = python_project(tmp_path)
    names = {**ESCAPED_NAMES, **VARIANT_NAMES, **TRACKED}
    project.coder_actions(
        {
            "write": {
                "calc.py": BROKEN,
                "tests/.gitignore": "*\n",
                "tests/conftest.py": MAKEREPORT,
                **dict.fromkeys(names, "x\n"),
            },
            "say": f"coder: done {ERASE_UP}\u202e\x1b]8;;http://x\x07",
            "sentinel": "CODER_COMPLETE",
        }
    )
    return project


def assert_flag_shown(text: str) -> None:
    """The flag, and every escaped name in its visible form, under the heading."""
    flags = text.split(FLAGS_HEADING, 1)[1].split("Scope deviations", 1)[0]
    assert FLAG in flags, text
    for shown in {**ESCAPED_NAMES, **VARIANT_NAMES}.values():
        assert shown in flags, (shown, flags)


@pytest.mark.slow
def test_the_json_question_shows_the_flag_and_no_character_a_terminal_obeys(tmp_path):
    project = hostile_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    question = paused.data["pending"]["question"]
    assert not hidden_characters(question), hidden_characters(question)
    assert_flag_shown(question)
    assert not hidden_characters(paused.data["output"])
    assert not hidden_characters(paused.stdout) and not hidden_characters(paused.stderr)


@pytest.fixture
def socket():
    # a unix socket's path is short (108 bytes): not under pytest's tmp_path
    with tempfile.TemporaryDirectory(prefix="sk-tmux-") as where:
        yield Path(where) / "s"


def test_on_a_terminal_the_tamper_flags_section_shows_the_flag(tmp_path, socket):
    project = hostile_project(tmp_path)
    term = Tmux([PY, "-m", "stepkit", *project.run_args()], project.root, project.env(), socket)
    try:
        screen = term.wait_for(r"Options: approve / revise .*\n> ?$")
        term.type("reject")
        assert term.exit_code() == 4  # STEP_REJECTED
    finally:
        term.close()
    # the pane is 120 cells wide: a long flag wraps, as a person sees it
    assert_flag_shown(screen.replace("\n", ""))
    assert "coder: done \\x1b[2K" in screen or "CODER_COMPLETE" in screen


@pytest.mark.slow
def test_the_mcp_answer_and_its_progress_show_the_flag_visibly(tmp_path):
    pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'stepkit[mcp]')")
    from tests.e2e.test_mcp_server import Client, data, serve

    project = hostile_project(tmp_path)
    script = project.script()
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        seen["paused"] = data(
            await client.call(
                "run_step", step=1, engine=f"scripted:{script}", coder=project.scripted_coder
            )
        )
        seen["progress"] = list(client.progress)

    serve(project, scenario)
    paused = seen["paused"]
    assert paused["outcome"] == "PAUSED", paused
    assert_flag_shown(paused["pending"]["question"])
    everything = repr(paused)  # every field, as its characters (a repr escapes nothing printable)
    assert not hidden_characters(str(paused)), hidden_characters(str(paused))
    assert "\\x1b" not in everything.replace("\\\\x1b", "")
    assert not hidden_characters("\n".join(seen["progress"]))


@pytest.mark.slow
def test_the_handoff_file_shows_the_names_visibly(tmp_path):
    project = hostile_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stdout + done.stderr
    handoff = project.handoff().read_text(encoding="utf-8")
    assert not hidden_characters(handoff), hidden_characters(handoff)
    for shown in TRACKED.values():
        assert shown in handoff, handoff
    assert not hidden_characters(done.stdout + done.stderr)


@pytest.mark.slow
def test_a_failing_test_id_and_the_coders_output_with_escapes_are_printed_visibly(tmp_path):
    """A failing test whose id has escapes (its module's name) and a coder's
    output with them, through the printed output of ``stepkit run`` (no
    ``--json``): nothing of either is obeyed."""
    project = python_project(tmp_path)
    project.coder_actions(
        {
            "write": {
                "calc.py": GOOD_MUL,
                f"tests/unit/test_{ERASE_UP}x.py": TEST_MUL.replace("== 6", "== 7"),
            },
            "say": f"coder: done{ERASE_UP}\u202e\x1b]8;;x:y\x07",
            "sentinel": "CODER_COMPLETE",
        }
    )
    failed = project.run("--set", "max_fix_attempts=0", json_out=False)
    assert failed.code == 1 and failed.stdout.startswith("STEP_FAILED"), failed.stdout
    printed = failed.stdout + failed.stderr
    assert not hidden_characters(printed), hidden_characters(printed)
    # the gate's evidence names the test (its tool's colour codes are dropped there, escapes with them)
    assert "x.py::test_mul" in failed.stdout
    assert "coder: done\\x1b[2K\\x1b[1A" in failed.stdout
