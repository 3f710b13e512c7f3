"""GitHub expressions evaluated for a push to the default branch on Linux:
what cannot be known here is UNKNOWN, and only && and || can get past it."""

from __future__ import annotations

import pytest

from stepkit.plugins.projects.ci_expr import UNKNOWN, Closed, condition, substitute

CONTEXT = {
    "github": {"event_name": "push", "ref": "refs/heads/main", "event": {}},
    "runner": {"os": "Linux"},
    "matrix": Closed({"python": "3.12", "os": "ubuntu-latest", "experimental": False}),
    "env": Closed({"TOXENV": "py312"}),
}


@pytest.mark.parametrize(
    ("expression", "verdict"),
    [
        ("github.event_name == 'push'", True),
        ("${{ github.event_name == 'pull_request' }}", False),
        ("github.ref == 'refs/heads/main' && runner.os == 'linux'", True),
        ("startsWith(github.ref, 'refs/tags/')", False),
        ("contains(matrix.os, 'ubuntu') && !matrix.experimental", True),
        ('contains(fromJSON(\'["3.11", "3.12"]\'), matrix.python)', True),
        ("matrix.python != '3.12' || always()", True),
        ("success() && env.TOXENV == 'PY312'", True),
        ("matrix.missing == ''", True),
        ("matrix.python >= 3.11", True),
        ("secrets.TOKEN != ''", UNKNOWN),
        ("github.event.pull_request.head.repo.fork", UNKNOWN),
        ("github.repository == 'org/repo' && failure()", False),
        ("github.repository == 'org/repo' || cancelled()", UNKNOWN),
        ("steps.cache.outputs.hit != 'true' || github.event_name == 'push'", True),
        ("hashFiles('**/x') != ''", UNKNOWN),
        ("matrix.python == ", UNKNOWN),
    ],
)
def test_conditions(expression, verdict):
    assert condition(expression, CONTEXT) is verdict


def test_substitution_puts_values_in_and_refuses_what_is_unknown():
    assert substitute("tox -e py${{ matrix.python }}-${{ env.TOXENV }}", CONTEXT) == (
        "tox -e py3.12-py312"
    )
    assert substitute("echo ${{ secrets.X }}", CONTEXT) is UNKNOWN
