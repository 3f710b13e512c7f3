"""What a user sees: ``stepkit run`` on a real pseudo-terminal (live progress,
gate lines, the final question answered by typing), plain line-per-event
output when not on a TTY, and ``--json`` as the only thing on stdout.

The pty tests read the terminal with a bounded select loop (never a sleep)
and look at the text a user would see: ANSI sequences interpreted by a
small screen model (carriage return, erase line, cursor up), colours
dropped.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import time

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import assert_gate_stopped, checkpoint, waiting_test_cmd
from tests.support.e2e import ORIENT, PY, make_project
from tests.support.waiting import SAFETY_S

CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"

#: A project-local orient that spends tokens, so the live line has some to show.
SPENDING_ORIENT = f"""import stepkit
from stepkit.records import Usage


@stepkit.hookimpl
def stepkit_orient(ctx):
    ctx.usage = ctx.usage.add(Usage(input_tokens=1200, output_tokens=34, cost_usd=0.0123))
    return {ORIENT!r}
"""


class Terminal:
    """A command on a pseudo-terminal that is its controlling terminal."""

    def __init__(self, argv: list[str], cwd, env: dict[str, str]):
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: never returns
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd, self.raw, self.code, self.seen = pid, fd, b"", None, 0

    @property
    def text(self) -> str:
        """Everything written so far, decoded, escape sequences kept."""
        return self.raw.decode("utf-8", errors="replace")

    @property
    def screen(self) -> str:
        return render(self.text)

    def read_until(self, pattern: str, seconds: float = SAFETY_S) -> re.Match:
        """Read until ``pattern`` matches the ANSI-stripped output after the
        previous match (so a second prompt is not the first one again)."""
        deadline = time.monotonic() + seconds
        while True:
            match = re.compile(pattern).search(strip_ansi(self.text), self.seen)
            if match:
                self.seen = match.end()
                return match
            assert time.monotonic() < deadline, f"no {pattern!r} on the terminal:\n{self.screen}"
            if not self._read(deadline - time.monotonic()):
                raise AssertionError(f"the terminal closed before {pattern!r}:\n{self.screen}")

    def read_while(self, condition, seconds: float = SAFETY_S) -> None:
        """Keep reading the terminal while ``condition()`` holds (bounded)."""
        deadline = time.monotonic() + seconds
        while condition():
            assert time.monotonic() < deadline, f"still waiting after {seconds} s:\n{self.screen}"
            self._read(min(0.05, deadline - time.monotonic()))

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, seconds: float = SAFETY_S) -> int:
        """Read to the end of the output; the exit code."""
        deadline = time.monotonic() + seconds
        while self._read(deadline - time.monotonic()):
            assert time.monotonic() < deadline, f"the command did not end:\n{self.screen}"
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def kill(self) -> None:
        if self.code is None:
            os.kill(self.pid, signal.SIGKILL)
            self.wait()

    def _read(self, seconds: float) -> bool:
        """Read what is there within ``seconds``; False at end of output."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, seconds))
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child side is closed
            return False
        self.raw += data
        return bool(data)


def strip_ansi(text: str) -> str:
    return CSI.sub("", text).replace("\r", "")


def render(text: str) -> str:
    """The lines a terminal shows for ``text`` (scrollback included)."""
    lines, row, col = [""], 0, 0
    i = 0
    while i < len(text):
        match = CSI.match(text, i)
        if match:
            arg, command = match.groups()
            if command == "K":
                lines[row] = "" if arg == "2" else lines[row][:col]
            elif command == "A":
                row = max(0, row - int(arg or 1))
            i = match.end()
            continue
        char, i = text[i], i + 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row, col = row + 1, 0
            if row == len(lines):
                lines.append("")
        elif char.isprintable():
            line = lines[row].ljust(col)
            lines[row] = line[:col] + char + line[col + 1 :]
            col += 1
    return "\n".join(line.rstrip() for line in lines)


def run_argv(project, *extra: str) -> list[str]:
    return [PY, "-m", "stepkit", *project.run_args(*extra)]


def cursor_restored(text: str) -> bool:
    return text.rfind(HIDE_CURSOR) < text.rfind(SHOW_CURSOR) or HIDE_CURSOR not in text


# -- on a terminal -------------------------------------------------------------


def test_files_and_diff_at_the_final_question_show_the_change_and_ask_again(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    env = project.env(CODER_AUTOAPPROVE="1", STEP_AUTOAPPROVE="1", PAGER="sed s/^/paged:/")
    term = Terminal(run_argv(project, "--step", "1"), project.root, env)
    try:
        term.read_until(r"To look first, type: files / diff\s+Options: .*\s*> ")
        term.type("files\n")
        term.read_until(r"\s*calc\.py  \+4 -0\s+Answer one of approve.*\s*> ")
        term.type("diff\n")  # through the pager: the user's, as $PAGER names it
        term.read_until(r"paged:\+\+\+ b/calc\.py[\s\S]*?paged:\+def mul\(a, b\):[\s\S]*?> ")
        term.type("approve\n")
        assert term.wait() == 0, term.screen
    finally:
        term.kill()
    # the views were no answers: the coder ran once, the step completed on the approval
    assert project.coder_calls() == 1
    assert "STEP_COMPLETE" in term.screen
    assert "result: complete" in project.handoff(1).read_text()


def test_on_a_terminal_verbose_shows_every_node_live_and_asks_the_final_question(tmp_path):
    project = make_project(tmp_path)
    (project.root / "stepconf.py").write_text(SPENDING_ORIENT)
    waiting = waiting_test_cmd(project)
    term = Terminal(run_argv(project, "--verbose"), project.root, project.env(TEST_CMD=waiting))
    try:
        # the live line while the test gate runs: the node, its time ticking, the run's, tokens and cost
        pattern = r"verify_tests (\d+\.\d)s · run \d\d:\d\d\.\d · 1,234 tokens · \$0\.0123"
        first = term.read_until(pattern).group(1)
        term.read_until(pattern.replace(r"(\d+\.\d)", f"(?!{re.escape(first)}s)" + r"(\d+\.\d)"))
        (project.state_dir / "go").touch()

        term.read_until(r"> ")
        screen = term.screen
        for line in (
            "✓ resolve_step → orient",
            "✓ verify_build → verify_tests",
            "gate format: NOT RUN (no command; this is NOT evidence that format passed)",
            "gate lint: PASS",
            "gate build: PASS",
            "gate tests: PASS",
        ):
            assert line in screen, screen
        question = screen.rsplit("\ngate_user_review ──", 1)[1].splitlines()[1:]
        assert question[0] == "Step 1 (Add mul) is implemented and verified.", screen
        assert "- format: NOT RUN (no command; this is NOT evidence that format passed)" in question
        assert any(line.startswith("- tests: PASS (") for line in question)
        assert question[-3:] == [
            "To look first, type: files / diff",
            "Options: approve / revise / reject / abort — or comments of two words or more",
            ">",
        ], screen
        assert re.search(r"- tests: \x1b\[[0-9;]*32mPASS", term.text)  # in green

        term.type("approve\n")
        assert term.wait() == 0
    finally:
        term.kill()
        (project.state_dir / "go").touch()  # a waiter left by a failure ends too
    screen = term.screen
    after = screen.split("> approve", 1)[1]
    assert "STEP_COMPLETE" in after and "- tests: PASS" in after
    assert re.search(
        r"run \S+: STEP_COMPLETE \(exit 0\) · \d\d:\d\d\.\d this session · 1,234 tokens", after
    ), after
    assert cursor_restored(term.text)
    assert project.plan_status(1) == "complete"


def test_a_slip_typed_at_the_final_question_is_asked_again_never_sent_to_the_coder(tmp_path):
    project = make_project(tmp_path)
    term = Terminal(run_argv(project), project.root, project.env())
    try:
        term.read_until(r"Options: approve / revise / reject / abort.*\n> ")
        term.type("aprove\n")
        term.read_until(r"'aprove' is not an option: did you mean approve\? \(answer one of")
        term.read_until(r"> ")
        term.type("y\n")  # the natural reply to "did you mean approve?"
        assert term.wait() == 0
    finally:
        term.kill()
    assert "STEP_COMPLETE" in term.screen.split("> y", 1)[1]
    assert not (project.state_dir / "coder_prompt_1.txt").exists()  # one coder round only


def test_one_word_at_the_final_question_is_refused_and_comments_are_confirmed(tmp_path):
    project = make_project(tmp_path)
    term = Terminal(run_argv(project), project.root, project.env())
    try:
        term.read_until(r"Options: approve / revise / reject / abort.*\n> ")
        for word in ("no", "quit", "nope"):
            term.type(f"{word}\n")
            term.read_until(rf"'{word}' is not an option \(answer one of approve, revise, reject")
            term.read_until(r"> ")
        term.type("rename mul please\n")
        term.read_until(
            r"Your comments:\n  rename mul please\nsend these comments to the coder\? \[y/N\]"
        )
        term.read_until(r"> ")
        term.type("\n")  # the default is no: nothing is sent
        term.read_until(r"Not sent\. Answer one of approve, revise, reject, abort")
        term.read_until(r"> ")
        term.type("approve\n")
        assert term.wait() == 0
    finally:
        term.kill()
    assert "STEP_COMPLETE" in term.screen.split("> approve", 1)[1]
    assert not (project.state_dir / "coder_prompt_1.txt").exists()  # one coder round only


def test_ctrl_c_on_a_terminal_restores_it_and_says_how_to_resume(tmp_path):
    project = make_project(tmp_path)
    env = project.env(TEST_CMD=waiting_test_cmd(project))
    term = Terminal(run_argv(project), project.root, env)
    try:
        term.read_while(lambda: not (project.state_dir / "started").exists())
        term.type("\x03")  # Ctrl-C: the terminal signals its foreground group
        assert term.wait() == 130
    except BaseException:
        (project.state_dir / "go").touch()  # a waiter left by a failure ends too
        raise
    finally:
        term.kill()
    assert_gate_stopped(project)
    (project.state_dir / "go").touch()
    (run_id,) = [p.name for p in (store_dir(project.root) / "runs").iterdir()]
    assert checkpoint(project, run_id)["status"] == "interrupted"
    lines = term.screen.splitlines()
    resume = next(line for line in lines if "Resume with:" in line)
    assert resume.startswith("stepkit: interrupted;"), (
        lines
    )  # on its own line, not after the live one
    assert resume.endswith(f"Resume with: stepkit resume {run_id}")  # run where it was started
    assert cursor_restored(term.text)

    # resumed on the terminal: the cut-off gate runs again and only it is shown
    term = Terminal(
        [PY, "-m", "stepkit", "resume", "--verbose", "--project-dir", str(project.root)],
        project.root,
        env,
    )
    try:
        term.read_until(r"Options: approve / revise.*\n> ")
        term.type("approve\n")
        assert term.wait() == 0
    finally:
        term.kill()
    screen = term.screen
    # the first finished node shown is the re-run gate node (a spinner frame
    # may precede it on the same line, depending on timing)
    finished = [line for line in screen.splitlines() if "→" in line]
    assert finished and "✓ verify_tests → edge_case_sweep" in finished[0], screen
    assert [line.split(":")[0] for line in screen.splitlines() if line.startswith("  gate ")] == [
        "  gate tests"
    ]
    assert "STEP_COMPLETE (exit 0)" in screen


# -- not on a terminal ----------------------------------------------------------


@pytest.mark.slow
def test_without_a_terminal_verbose_progress_is_one_plain_line_per_event(tmp_path):
    project = make_project(tmp_path)
    result = project.run("--verbose", json_out=False)
    assert result.code == 5
    assert result.stdout.startswith("PAUSED\n")
    assert "\x1b[" not in result.stderr + result.stdout
    events = result.stderr.splitlines()
    assert re.fullmatch(r"\[\d\d:\d\d\.\d\] resolve_step \(script\) started", events[0]), events
    assert any(
        re.fullmatch(r"\[\d\d:\d\d\.\d\] verify_tests → edge_case_sweep \(\d+\.\d\ds\)", e)
        for e in events
    )
    assert "  gate tests: PASS (`" in result.stderr
    assert re.search(r"run \S+: PAUSED \(exit 5\)", events[-1])
    started = [e for e in events if e.endswith(" started")]
    finished = [e for e in events if " → " in e]
    assert len(started) == len(finished) + 1  # the final question is open

    done = project.stepkit(
        "resume", "--project-dir", str(project.root), "--answer", "approve", json_out=False
    )
    assert done.code == 0 and done.stdout.startswith("STEP_COMPLETE\n")
    assert "\x1b[" not in done.stderr


@pytest.mark.slow
def test_json_prints_one_object_on_stdout_and_nothing_else(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5
    assert json.loads(paused.stdout)["outcome"] == "PAUSED"  # the whole stdout is one object
    assert paused.stderr == ""
    done = project.resume("approve")
    assert json.loads(done.stdout)["outcome"] == "STEP_COMPLETE"
    assert done.stderr == ""
