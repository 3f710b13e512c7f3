"""The wheel ships stepkit and stepkit.plugins, never a top-level plugins package."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_directory_is_listed_in_pyproject():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for base, prefix in ((ROOT / "stepkit", "stepkit"), (ROOT / "plugins", "stepkit.plugins")):
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if rel[:1] == ("examples",):  # the demo project is package data
                continue
            found.add(".".join((prefix, *rel)))
    assert found == listed


@pytest.mark.slow
def test_wheel_maps_plugins_to_stepkit_plugins(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("stepkit-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "stepkit/plugins/__init__.py" in names
    assert "stepkit/protocol/step_runner.yaml" in names
    assert "stepkit/examples/demo/plans/steps/01-slugify.md" in names
    assert "stepkit/planrepo/step_template.md" in names  # stepkit init's template
    assert not any(n.startswith("plugins/") for n in names)
