"""``[commands]`` and ``[timeouts]`` take the same gate names: the tests gate
is ``test`` or ``tests`` in both (a user wrote ``[commands] tests`` and got
no tests gate, ``[timeouts] test`` and got an error)."""

from __future__ import annotations

import json

import pytest

from stepkit.config import load_config
from tests.support.cli import stepkit


@pytest.mark.parametrize(
    "command_key, timeout_key",
    [("test", "tests"), ("tests", "test"), ("tests", "tests"), ("test", "test")],
)
def test_the_tests_gate_has_either_name_in_both_tables(tmp_path, command_key, timeout_key):
    (tmp_path / "stepkit.toml").write_text(
        f'[commands]\n{command_key} = "python -m pytest -q"\n\n[timeouts]\n{timeout_key} = 42\n'
    )
    config = load_config(tmp_path)
    assert (config.commands.test, config.timeouts.tests) == ("python -m pytest -q", 42)
    detect = stepkit("detect", "--json", "--project-dir", str(tmp_path), check=True)
    tests = next(g for g in json.loads(detect.stdout)["gates"] if g["name"] == "tests")
    assert tests["command"] == "python -m pytest -q"


def test_an_unknown_gate_name_is_still_refused(tmp_path):
    (tmp_path / "stepkit.toml").write_text("[timeouts]\ntset = 5\n")
    done = stepkit("detect", "--project-dir", str(tmp_path))
    assert done.returncode == 2 and "tset" in done.stderr and len(done.stderr.splitlines()) == 1


def test_each_gate_of_the_table_is_a_setting_with_its_default_and_keys(tmp_path):
    """``[commands]`` and ``[timeouts]`` are built from the gate table: every
    gate takes each of its keys, and its timeout defaults to its row's."""
    from stepkit.config import Config
    from stepkit.gatetable import GATES

    assert [row.name for row in GATES] == ["format", "lint", "build", "tests"]
    for row in GATES:
        assert Config().timeouts.gate(row.name) == row.timeout
        for key in row.keys:
            config = Config.model_validate({"commands": {key: "x"}, "timeouts": {key: 7}})
            assert (config.commands.gate(row.name), config.timeouts.gate(row.name)) == ("x", 7)
