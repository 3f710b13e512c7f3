"""node's test runner (``node --test``) with the real node: every test
skipped is NOT RUN, not a pass; failures are named by id (``file › suite ›
name``) with counts, directly and behind ``npm test``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stepkit.cli import main

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

SKIPPED = """const { test } = require('node:test');
""" + "".join(f"test('later {i}', {{ skip: true }}, () => {{}});\n" for i in range(40))

SUITE = """const { test, describe, it } = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('breaks', () => { assert.strictEqual(1 + 1, 3); });
describe('calc', () => {
  it('multiplies', () => { assert.strictEqual(2 * 3, 6); });
  it('divides', () => { assert.strictEqual(6 / 3, 3); });
  describe('nested', () => { it('deep fail', () => { throw new Error('boom'); }); });
});
test('skipped', { skip: true }, () => {});
"""
OTHER = """const { test } = require('node:test');
test('breaks', () => { throw new Error('b broke'); });
"""
FAILING = [
    "test/a.test.js › breaks",
    "test/a.test.js › calc › divides",
    "test/a.test.js › calc › nested › deep fail",
    "test/b.test.js › breaks",
]


def gate_of(capsys, project: Path, command: str) -> dict:
    (project / "stepkit.toml").write_text(
        f'[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = {json.dumps(command)}\n'
    )
    main(["verify", "--project-dir", str(project), "--json"])
    return next(g for g in json.loads(capsys.readouterr().out)["gates"] if g["name"] == "tests")


def node_project(root: Path, files: dict[str, str], script: str = "node --test") -> Path:
    (root / "test").mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps({"name": "t", "private": True, "scripts": {"test": script}})
    )
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    "command",
    ["node --test", "npm test", "sh -c 'node --test'", "node --test --test-reporter=spec"],
)
def test_every_test_skipped_is_not_run(tmp_path, capsys, command):
    project = node_project(tmp_path, {"test/a.test.js": SKIPPED})
    gate = gate_of(capsys, project, command)
    assert gate["status"] == "not_run", gate["evidence"]
    assert gate["exit_code"] == 0
    assert "This is NOT evidence that tests passed" in gate["evidence"]
    assert "skipped" in gate["summary"], gate["summary"]


@pytest.mark.parametrize("command", ["node --test", "npm test", "node --test test/"])
def test_failures_are_named_by_id_with_counts(tmp_path, capsys, command):
    project = node_project(tmp_path, {"test/a.test.js": SUITE, "test/b.test.js": OTHER})
    gate = gate_of(capsys, project, command)
    assert gate["status"] == "fail"
    for test_id in FAILING:
        assert test_id in gate["evidence"], gate["evidence"]
    assert "4 failed, 2 passed, 1 skipped" in gate["summary"], gate["summary"]
    results = json.loads(Path(gate["log"]).with_suffix(".tests.json").read_text())
    assert [k for k, v in results["outcomes"].items() if v == "failed"] == FAILING
    assert results["outcomes"]["test/a.test.js › calc › multiplies"] == "passed"


def test_a_command_choosing_its_own_reporter_still_names_its_failures(tmp_path, capsys):
    project = node_project(tmp_path, {"test/a.test.js": SUITE, "test/b.test.js": OTHER})
    gate = gate_of(capsys, project, "node --test --test-reporter=spec")
    assert gate["status"] == "fail"
    for name in ("breaks", "divides", "deep fail"):
        assert f"test/a.test.js › {name}" in gate["evidence"], gate["evidence"]
    assert gate["summary"] == "4 failed", gate[
        "summary"
    ]  # the failures it names; node prints no id for a pass


def test_a_script_given_a_test_flag_is_not_node_s_test_runner(tmp_path):
    from stepkit.workspace.testrunners import report_invocation

    assert report_invocation("node check.js --test", tmp_path, tmp_path / "r").runner is None
    assert (
        report_invocation("node --experimental-vm-modules --test", tmp_path, tmp_path / "r").runner
        == "node-test"
    )
    own = report_invocation(
        "NODE_OPTIONS=--max-old-space-size=4096 node --test", tmp_path, tmp_path / "r"
    )
    assert own.runner == "node-test" and own.report is None and "NODE_OPTIONS" not in own.env
