"""``stepkit verify`` agrees with real projects' CI run by hand
(:mod:`tests.realrepos.verify_vs_ci`): at least 95 % of the verdicts of the
gates CI runs, and every environment failure CI meets is one in stepkit's
verdict too, never a code failure."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.realrepos import verify_vs_ci as vc

pytestmark = pytest.mark.realrepos


@pytest.fixture(scope="module")
def results() -> list[dict]:
    repos = Path(os.environ["STEPKIT_REALREPOS"])
    found = []
    for repo in vc.REPOS:
        source, commit = vc.source_of(repos, repo.name), vc.pinned_commits().get(repo.name)
        reason = vc.skip_reason(repo, source, commit)
        if reason is None:
            work = Path(tempfile.mkdtemp(prefix="verify-vs-ci-")) / "w"
            work.mkdir()
            found.append(vc.compare(repo, commit, source, work, vc.stepkit_command()))
    if len(found) < 10:
        pytest.skip(f"only {len(found)} of the projects can be compared here (10 needed)")
    return found


def test_at_least_95_percent_of_the_verdicts_agree(results):
    counted = [g["agree"] for r in results for g in r["gates"] if g["agree"] is not None]
    assert sum(counted) >= 0.95 * len(counted), vc.table(results)


def test_every_environment_failure_is_reported_as_one(results):
    wrong = [
        (r["repo"], g["gate"], g["stepkit"])
        for r in results
        for g in r["gates"]
        if g["ci"] == "env-fault" and g["stepkit"] == "fail"
    ]
    assert wrong == [], vc.table(results)
