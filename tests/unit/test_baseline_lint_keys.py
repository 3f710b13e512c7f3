"""Baselines keyed right: each lint or build failure is keyed by file, rule
and message, so a second, different error in a file that already had one is
NEW — with the real ruff (its default full output) and the real mypy (whose
``note:`` lines are no failures), and recorded eslint and clippy outputs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from stepkit.cli import main
from stepkit.workspace.baseline import failure_keys
from stepkit.workspace.lintkeys import lint_keys
from tests.support.gitrepo import init_repo

BIN = Path(sys.executable).parent
RUFF = shlex.quote(str(BIN / "ruff"))
MYPY = shlex.quote(str(BIN / "mypy"))


def verify_baseline(capsys, project: Path, **commands: str) -> tuple[int, dict]:
    table = {"format": "", "lint": "", "build": "", "test": "", **commands}
    (project / "stepkit.toml").write_text(
        "[commands]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    )
    code = main(["verify", "--project-dir", str(project), "--json", "--baseline", "HEAD"])
    return code, {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}


def test_ruff_full_output_a_new_error_in_a_file_that_had_one_is_new(tmp_path, capsys):
    project = init_repo(
        tmp_path / "repo",
        {
            "a.py": "import os\n\n\ndef f():\n    return 1\n",
            ".gitignore": ".stepkit/\n.ruff_cache/\n",
        },
    )
    code, gates = verify_baseline(capsys, project, lint=f"{RUFF} check --no-cache")
    # no tests command: verify exits 1 (tests NOT RUN), the lint gate passes on its baseline
    assert (code, gates["lint"]["status"]) == (1, "pass"), gates["lint"]["evidence"]
    assert gates["lint"]["preexisting_failures"] == ["a.py: F401 `os` imported but unused"]

    # the step adds a second, different error to the same file (and moves the old one down)
    (project / "a.py").write_text("\nimport os\n\n\ndef f():\n    x = 1\n    return 1\n")
    code, gates = verify_baseline(capsys, project, lint=f"{RUFF} check --no-cache")
    lint = gates["lint"]
    assert (code, lint["status"]) == (1, "fail"), lint["evidence"]
    assert lint["new_failures"] == ["a.py: F841 Local variable `x` is assigned to but never used"]
    assert lint["preexisting_failures"] == ["a.py: F401 `os` imported but unused"]


def test_ruff_json_and_concise_outputs_key_alike(tmp_path):
    (tmp_path / "a.py").write_text("import os\nimport sys\n")

    def keys(*args: str) -> list[str]:
        out = subprocess.run(
            [str(BIN / "ruff"), "check", "--no-cache", *args, "a.py"],
            check=False,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        ).stdout
        return lint_keys(out, [tmp_path])

    expected = ["a.py: F401 `os` imported but unused", "a.py: F401 `sys` imported but unused"]
    assert keys("--output-format=full") == expected
    assert keys("--output-format=concise") == expected
    assert [k.replace(f"{tmp_path}/", "") for k in keys("--output-format=json")] == expected


def test_mypy_notes_are_not_failures_and_a_second_error_in_the_file_is_new(tmp_path, capsys):
    broken = 'x: int = "s"\n'
    project = init_repo(
        tmp_path / "repo", {"m.py": broken, ".gitignore": ".stepkit/\n.mypy_cache/\n"}
    )
    mypy = f"{MYPY} --no-incremental --cache-dir=/dev/null m.py"
    code, gates = verify_baseline(capsys, project, build=mypy)
    assert gates["build"]["status"] == "pass" and len(gates["build"]["preexisting_failures"]) == 1

    # a note (reveal_type) and one new error: one new failure, not three
    (project / "m.py").write_text('\n\nx: int = "s"\ny: str = 1\nreveal_type(x)\n')
    code, gates = verify_baseline(capsys, project, build=mypy)
    build = gates["build"]
    assert (code, build["status"]) == (1, "fail"), build["evidence"]
    assert build["new_failures"] == [
        'm.py: assignment Incompatible types in assignment (expression has type "int", variable has type "str")'
    ]
    assert not any(
        "Revealed type" in k for k in build["new_failures"] + build["preexisting_failures"]
    )


#: eslint 9's stylish output as it prints it (recorded), then the same run with -f json
ESLINT_STYLISH = """
/tmp/x/tree/src/app.js
   1:7   error    'unused' is assigned a value but never used  no-unused-vars
   4:1   warning  Unexpected console statement                  no-console
  10:12  error    'y' is not defined                            no-undef

/tmp/x/tree/src/util.js
  2:3  error  Unexpected constant condition  no-constant-condition

✖ 4 problems (3 errors, 1 warning)
"""
ESLINT_JSON = json.dumps(
    [
        {
            "filePath": "/tmp/x/tree/src/app.js",
            "messages": [
                {
                    "ruleId": "no-unused-vars",
                    "severity": 2,
                    "message": "'unused' is assigned a value but never used",
                    "line": 1,
                    "column": 7,
                },
                {
                    "ruleId": "no-console",
                    "severity": 1,
                    "message": "Unexpected console statement",
                    "line": 4,
                    "column": 1,
                },
                {
                    "ruleId": "no-undef",
                    "severity": 2,
                    "message": "'y' is not defined",
                    "line": 10,
                    "column": 12,
                },
            ],
        },
        {
            "filePath": "/tmp/x/tree/src/util.js",
            "messages": [
                {
                    "ruleId": "no-constant-condition",
                    "severity": 2,
                    "message": "Unexpected constant condition",
                    "line": 2,
                    "column": 3,
                }
            ],
        },
    ]
)


def test_eslint_stylish_and_json_key_by_file_rule_and_message_without_warnings():
    expected = [
        "src/app.js: no-unused-vars 'unused' is assigned a value but never used",
        "src/app.js: no-undef 'y' is not defined",
        "src/util.js: no-constant-condition Unexpected constant condition",
    ]
    root = [Path("/tmp/x/tree")]
    assert lint_keys(ESLINT_STYLISH, root) == expected
    assert lint_keys(ESLINT_JSON, root) == expected
    only_warnings = "src/a.js\n  4:1  warning  Unexpected console statement  no-console\n"
    assert lint_keys(only_warnings) == ["src/a.js: no-console Unexpected console statement"]


CLIPPY_HUMAN = """error: this comparison involving the minimum or maximum element for this type contains a case that is always true or always false
 --> src/lib.rs:2:8
  |
2 |     if x >= 0 {}
  |        ^^^^^^
  |
  = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#absurd_extreme_comparisons
  = note: `#[deny(clippy::absurd_extreme_comparisons)]` on by default

warning: unused variable: `y`
 --> src/lib.rs:5:9
  |
5 |     let y = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_y`

error: could not compile `adder` (lib) due to 1 previous error; 1 warning emitted
"""


def test_clippy_human_and_json_messages_are_keyed_by_file_lint_and_message():
    assert lint_keys(CLIPPY_HUMAN) == [
        (
            "src/lib.rs: clippy::absurd_extreme_comparisons this comparison involving the minimum or maximum "
            "element for this type contains a case that is always true or always false"
        )
    ]
    message = {
        "reason": "compiler-message",
        "message": {
            "level": "error",
            "code": {"code": "E0308"},
            "message": "mismatched types",
            "spans": [{"file_name": "src/main.rs", "is_primary": True, "line_start": 4}],
        },
    }
    note = {
        "reason": "compiler-message",
        "message": {
            "level": "warning",
            "code": None,
            "message": "unused import",
            "spans": [{"file_name": "src/x.rs"}],
        },
    }
    lines = "\n".join(
        json.dumps(m) for m in (message, note, {"reason": "build-finished", "success": False})
    )
    assert lint_keys(lines) == ["src/main.rs: E0308 mismatched types"]


def test_failure_keys_of_a_lint_gate_use_the_keys():
    assert failure_keys("lint", "fail", None, "a.py:3:1: F401 `os` imported but unused\n") == [
        "a.py: F401 `os` imported but unused"
    ]
    assert failure_keys("build", "fail", None, "Segmentation fault\n") is None


def test_eslint_json_under_npm_s_header_is_still_read():
    npm = "\n> web@1.0.0 lint\n> eslint -f json .\n\n" + ESLINT_JSON + "\n"
    first = lint_keys(npm, [Path("/tmp/x/tree")])[0]
    assert first == "src/app.js: no-unused-vars 'unused' is assigned a value but never used"


def test_a_format_no_rule_reads_is_still_keyed_by_its_located_lines():
    kotlin = (
        "e: file:///p/src/A.kt:3:5 Unresolved reference: foo\n"
        "e: file:///p/src/A.kt:9:1 Unresolved reference: bar\n"
    )
    assert lint_keys(kotlin) == [
        "e: file:///p/src/A.kt Unresolved reference: foo",
        "e: file:///p/src/A.kt Unresolved reference: bar",
    ]
