"""End to end: what an answer at the final approval means, through ``stepkit
resume --answer`` (a real CLI process on a real paused run).

An option by its exact word (case, spaces and end punctuation aside), the
usual yes words as ``approve``, and comments of two words or more for the
coder; any other one-word answer is refused with the options (exit 2), the
run left as it was and nothing sent to the coder.
"""

from __future__ import annotations

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project

# whole-step runs: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

#: The words of the issue, and a few it did not list.
REFUSED = ["no", "n", "q", "quit", "exit", "nope", "sure", "maybe", "yes!?no"]


@pytest.fixture
def paused(tmp_path):
    project = make_project(tmp_path)
    result = project.run()
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review"
    assert "Options: approve, revise, reject, abort (or comments of two words or more)" in (
        result.output
    )
    return project, result.data["run_id"]


def test_a_one_word_answer_that_is_no_option_is_refused_and_changes_nothing(paused):
    project, run_id = paused
    state = store_dir(project.root) / "runs" / run_id / "state.json"
    before = state.read_bytes()
    for word in REFUSED:
        refused = project.resume(word)
        assert refused.code == 2, (word, refused.stderr + refused.stdout)
        assert refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1, word
        assert "approve, revise, reject, abort" in refused.stderr, refused.stderr
        assert "two words or more" in refused.stderr, refused.stderr
        assert state.read_bytes() == before, word  # the run is as it was
    assert project.coder_calls() == 1  # never sent to the coder
    assert project.resume("approve").outcome == "STEP_COMPLETE"


@pytest.mark.parametrize("answer", ["y", "Y", "lgtm", "approve.", "  APPROVE "])
def test_a_yes_word_or_the_option_however_typed_approves(paused, answer):
    project, _ = paused
    done = project.resume(answer)
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert project.coder_calls() == 1


def test_comments_of_two_words_go_to_the_coder(paused):
    project, _ = paused
    again = project.resume("rename mul please")
    assert again.code == 5 and again.data["pending"]["node"] == "gate_user_review"
    assert project.coder_calls() == 2
    assert "rename mul please" in project.coder_prompt(1)
