"""The hostile coder, through the judge's own tools: the user's git
configuration that stepkit's git calls read, the installed files of the
test runner the gates start, stepkit's own installation and its plugins.
They are outside the project, where the scope guard does not look, yet
the coder runs as the user and can write them.  Each trick breaks
``calc.add`` so that a committed test really fails and must end in the
tests gate failing, or at the final approval with a tamper flag that
forces the independent review.

Real pytest suites in tmp git repos, a tmp ``HOME``, throwaway
virtualenvs, the real CLI; the helpers of tests/e2e/test_hostile_coder.py.
"""

from __future__ import annotations

import pytest

from tests.e2e.test_hostile_coder import ADD, BROKEN, gate_of_tests, python_project

pytestmark = pytest.mark.slow

# -- the user's git configuration -----------------------------------------------

#: a smudge filter that breaks calc.add in whatever git checks out
SMUDGE = "[filter \"fix\"]\n\tsmudge = sed 's/a + b/a - b/'\n\tclean = cat\n"
#: trick -> the files (under the tmp HOME) it writes beside the broken calc.py
GIT_CONFIG: dict[str, dict[str, str]] = {
    "~/.gitconfig and ~/.config/git/attributes": {
        ".gitconfig": SMUDGE,
        ".config/git/attributes": "calc.py filter=fix\n",
    },
    # a variant no rule was written for: an included file names its own attributes file
    "an include in ~/.gitconfig names the filter and an attributes file": {
        ".gitconfig": "[include]\n\tpath = ~/.local/fix.inc\n",
        ".local/fix.inc": SMUDGE + "[core]\n\tattributesFile = ~/.local/fix.attributes\n",
        ".local/fix.attributes": "*.py filter=fix\n",
    },
}


@pytest.mark.parametrize("trick", list(GIT_CONFIG))
def test_git_configuration_written_during_the_run_never_reaches_stepkits_git(tmp_path, trick):
    """The baseline's ``git worktree add`` of the step's start ran the
    filter: the start was as broken as the step, the failing test
    "pre-existing", the gate passed."""
    home = tmp_path / "home"
    home.mkdir()
    project = python_project(tmp_path)
    planted = {str(home / rel): text for rel, text in GIT_CONFIG[trick].items()}
    project.coder_actions({"write": {"calc.py": BROKEN, **planted}, "sentinel": "CODER_COMPLETE"})
    result = project.run(env=project.env(HOME=str(home)))
    assert result.outcome == "STEP_FAILED", result.stdout[-3000:] + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["status"] == "fail" and ADD in gate["new_failures"], gate
