"""A resume loads only the stepkit entry points installed when its run began
(docs/threat-model.md, "stepkit's own installation and plugins"), through
every plugin manager the resume builds: the command's own and any that a
check before it goes on asks.  Real ``stepkit run`` and ``stepkit resume``
processes; the late distribution is a real dist-info in a site directory on
their ``PYTHONPATH``, planted while the run is paused, whose module leaves a
mark when it is imported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.e2e import DEVIATION, ORIENT, Project

LATE = """\
import traceback

with open({mark!r}, "a") as fh:
    fh.write("".join(traceback.format_stack()) + "----\\n")
"""


def plant_late_plugin(site: Path, mark: Path) -> None:
    """The distribution ``late`` whose ``stepkit`` entry point is ``late_plugin``."""
    dist = site / "late-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: late\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[stepkit]\nlate = late_plugin\n")
    (site / "late_plugin.py").write_text(LATE.format(mark=str(mark)))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("orient", "paused_at", "answer"),
    [
        # orient finds a deviation: the coder, and every check it needs, is still ahead
        (DEVIATION, "gate_deviation", "proceed"),
        # the final approval: no stage that calls the model is ahead
        (ORIENT, "gate_user_review", "approve"),
    ],
)
def test_an_entry_point_installed_while_a_run_is_paused_is_not_imported_by_its_resume(
    project: Project, tmp_path: Path, orient: dict, paused_at: str, answer: str
):
    site = tmp_path / "site"
    site.mkdir()
    mark = tmp_path / "late-imported"
    env = project.env(
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )
    paused = project.run(engine=project.script(orient=orient), env=env)
    assert paused.code == 5 and paused.data["pending"]["node"] == paused_at, paused.stderr

    plant_late_plugin(site, mark)
    resumed = project.resume(answer, env=env)

    assert resumed.code in (0, 5), resumed.stderr
    assert not mark.exists(), mark.read_text()  # where it was imported from
    # the planted distribution is live: a command that is no resume imports it
    assert project.stepkit("plugins", "--project-dir", str(project.root), env=env).code == 0
    assert mark.exists()
