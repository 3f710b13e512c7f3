"""The model-facing tools: confinement, forbidden writes, condensing, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.plugins.llm.tools import (
    MAX_OUTPUT_CHARS,
    coder_tools,
    read_only_tools,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "plans" / "steps").mkdir(parents=True)
    (root / "src" / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    (root / "plans" / "steps" / "01-a.md").write_text("# plan\n")
    (tmp_path / "outside.txt").write_text("outside secret\n")
    return root


def tools(project: Path, coder: bool = False):
    chosen = coder_tools(project, [project / "plans"]) if coder else read_only_tools(project)
    return {t.name: t for t in chosen}


def test_tool_names_and_arguments_are_the_fixed_ones(project):
    schemas = {name: t.input_schema for name, t in tools(project, coder=True).items()}
    assert {n: (sorted(s["properties"]), s["required"]) for n, s in schemas.items()} == {
        "read_file": (["limit", "offset", "path"], ["path"]),
        "list_dir": (["path"], ["path"]),
        "search": (["path", "pattern"], ["pattern"]),
        "run_command": (["command", "timeout"], ["command"]),
        "write_file": (["content", "path"], ["path", "content"]),
        "edit_file": (["new_text", "old_text", "path"], ["path", "old_text", "new_text"]),
    }
    assert sorted(tools(project)) == ["list_dir", "read_file", "run_command", "search"]


def test_read_file_numbers_lines_and_pages(project):
    text, is_error = tools(project)["read_file"].call(
        {"path": "src/app.py", "offset": 3, "limit": 2}
    )
    assert not is_error
    assert text.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[lines 3–4 of 10; continue with offset=5]",
    ]
    whole = tools(project)["read_file"].call({"path": "src/app.py"})[0].splitlines()
    assert len(whole) == 10 and whole[-1] == "    10\tline 10"  # the whole file: no footer


def test_read_file_pages_whole_lines_to_the_end_of_a_5000_line_file(project):
    from stepkit.plugins.llm.tools import READ_WINDOW_CHARS

    (project / "big.py").write_text(
        "".join(f"value_{n} = {'x' * (n % 90)}\n" for n in range(1, 5001))
    )
    read, seen, offset, calls = tools(project)["read_file"], [], 1, 0
    while True:
        text, is_error = read.call({"path": "big.py", "offset": offset})
        assert not is_error and len(text) <= READ_WINDOW_CHARS + 100
        *rows, footer = text.splitlines()
        seen += [int(row.split("\t")[0]) for row in rows]
        assert all(
            row.endswith("x" * (int(row.split("\t")[0]) % 90)) for row in rows
        )  # whole lines
        calls += 1
        if footer.endswith("end of file]"):
            break
        assert (
            footer.startswith(f"[lines {offset:,}–")
            and " of 5,000; continue with offset=" in footer
        )
        offset = int(footer.rsplit("=", 1)[1].rstrip("]"))
    assert seen == list(range(1, 5001)) and calls > 10
    assert footer == f"[lines {seen[-len(rows)]:,}–5,000 of 5,000; end of file]"
    assert (
        read.call({"path": "big.py", "offset": 6000})[0]
        == "[big.py: no line 6000; the file has 5,000 lines]"
    )


def test_tool_descriptions_state_their_bounds_and_read_only_rules(project):
    t = tools(project, coder=True)
    for name in ("read_file", "list_dir", "search"):
        assert t[name].description.startswith("Read-only")
    assert "400" in t["read_file"].description and "offset" in t["read_file"].description
    assert "100 matches" in t["search"].description
    assert "head and tail" in t["run_command"].description
    assert "change nothing" in t["run_command"].description
    props = t["read_file"].input_schema["properties"]
    assert (
        props["offset"]["description"].startswith("first line")
        and props["limit"]["maximum"] == 2000
    )


@pytest.mark.parametrize(
    "path", ["../outside.txt", "../../etc/passwd", "/etc/passwd", "src/../../outside.txt"]
)
def test_paths_outside_the_project_are_refused(project, path):
    text, is_error = tools(project)["read_file"].call({"path": path})
    assert is_error and "outside the project directory" in text


def test_symlink_escapes_are_refused(project, tmp_path):
    (project / "link.txt").symlink_to(tmp_path / "outside.txt")
    (project / "linkdir").symlink_to(tmp_path)
    t = tools(project)
    assert t["read_file"].call({"path": "link.txt"})[1] is True
    assert t["list_dir"].call({"path": "linkdir"})[1] is True
    text, is_error = t["search"].call({"pattern": "outside secret"})
    assert not is_error and text == "[no matches]"


def test_symlink_inside_the_project_is_followed(project):
    (project / "alias.py").symlink_to(project / "src" / "app.py")
    assert "line 1" in tools(project)["read_file"].call({"path": "alias.py"})[0]


def test_list_dir_and_search(project):
    t = tools(project)
    assert t["list_dir"].call({"path": "."})[0].splitlines() == ["plans/", "src/"]
    assert t["search"].call({"pattern": r"line 1\d?$", "path": "src"})[0].splitlines() == [
        "src/app.py:1: line 1",
        "src/app.py:10: line 10",
    ]
    text, is_error = t["search"].call({"pattern": "("})
    assert is_error and "bad regular expression" in text


def test_run_command_reports_exit_code_and_hides_the_api_key(project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-abcdef0123456789")
    text, is_error = tools(project)["run_command"].call(
        {"command": 'echo "key=[$ANTHROPIC_API_KEY]"; exit 3'}
    )
    assert not is_error
    assert text == "exit code: 3\nkey=[]\n"


def test_run_command_timeout_kills_the_process_group(project):
    text, _ = tools(project)["run_command"].call(
        {"command": "sleep 30 & sleep 30; echo never", "timeout": 1}
    )
    assert text.startswith("timed out after 1 s") and "never" not in text


def test_coder_cannot_write_the_plan_repo_git_or_run_store(project):
    t = tools(project, coder=True)
    for path in (
        "plans/steps/01-a.md",
        "plans/new.md",
        ".git/config",
        ".stepkit/x",
        "../escape.txt",
    ):
        text, is_error = t["write_file"].call({"path": path, "content": "x"})
        assert is_error, path
    text, is_error = t["edit_file"].call(
        {"path": "plans/steps/01-a.md", "old_text": "plan", "new_text": "hacked"}
    )
    assert is_error and "writing under plans/ is not allowed" in text
    assert (project / "plans" / "steps" / "01-a.md").read_text() == "# plan\n"
    assert not (project.parent / "escape.txt").exists()


def test_write_and_edit_inside_the_project(project):
    t = tools(project, coder=True)
    assert t["write_file"].call({"path": "src/new/mod.py", "content": "a = 1\r\nb = 1\r\n"})[0] == (
        "wrote 14 bytes to src/new/mod.py"
    )
    text, is_error = t["edit_file"].call(
        {"path": "src/new/mod.py", "old_text": "= 1", "new_text": "= 2"}
    )
    assert is_error and "found 2 times" in text
    assert t["edit_file"].call(
        {"path": "src/new/mod.py", "old_text": "b = 1", "new_text": "b = 2"}
    )[0] == ("edited src/new/mod.py; lines 2–2 now read:\n     1\ta = 1\n     2\tb = 2")
    assert (project / "src" / "new" / "mod.py").read_bytes() == b"a = 1\r\nb = 2\r\n"


def test_bad_arguments_are_tool_errors(project):
    t = tools(project)
    assert t["read_file"].call({}) == ("error: missing argument(s): path", True)
    assert t["read_file"].call({"path": 3}) == ("error: argument path must be a string", True)
    assert t["read_file"].call({"path": "src"})[1] is True
    assert t["run_command"].call({"command": "true", "timeout": "9"})[1] is True


def test_output_is_condensed_head_and_tail(project):
    (project / "big.log").write_text("".join(f"row {n}\n" for n in range(20000)))
    text = tools(project)["run_command"].call({"command": "cat big.log"})[0]
    assert len(text) <= MAX_OUTPUT_CHARS + 100
    assert "row 0\n" in text and "row 19999" in text and "chars omitted" in text
    assert "rerun the command with a filter" in text


def test_search_stops_with_a_hint(project):
    from stepkit.plugins.llm.tools import SEARCH_MATCHES

    (project / "many.txt").write_text("hit\n" * 500)
    lines = tools(project)["search"].call({"pattern": "hit"})[0].splitlines()
    assert len(lines) == SEARCH_MATCHES + 1 and "narrow the pattern or the path" in lines[-1]
    (project / "many.txt").write_text(("hit " + "y" * 290 + "\n") * 99)
    text = tools(project)["search"].call({"pattern": "hit"})[0]
    assert len(text) < 12_500 and text.endswith("narrow the pattern or the path to see the rest]")


def test_tool_output_is_redacted(project, monkeypatch):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    (project / ".env").write_text(f"GITHUB_TOKEN={secret}\nPORT=8000\n")
    t = tools(project)
    for name, args in (
        ("read_file", {"path": ".env"}),
        ("search", {"pattern": "TOKEN"}),
        ("run_command", {"command": "cat .env"}),
    ):
        text = t[name].call(args)[0]
        assert secret not in text and "[REDACTED]" in text, name


def test_binary_files_are_not_dumped(project):
    (project / "blob.bin").write_bytes(b"\x00\x01binary")
    text, is_error = tools(project)["read_file"].call({"path": "blob.bin"})
    assert is_error and "binary file" in text


SOURCE = "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(1, 31))


def test_an_edit_that_misses_shows_the_closest_lines_and_how_to_fix_the_call(project):
    (project / "mod.py").write_text(SOURCE)
    t = tools(project, coder=True)
    t["read_file"].call({"path": "mod.py"})
    # the model's old_text has the wrong indentation and a typo
    text, is_error = t["edit_file"].call(
        {
            "path": "mod.py",
            "old_text": "def f17(x):\n  retrun x + 17\n",
            "new_text": "def f17(x):\n    return x * 17\n",
        }
    )
    assert is_error
    assert "old_text not found" in text and "closest match is lines 49–50" in text
    assert "    49\tdef f17(x):\n    50\t    return x + 17" in text
    assert "copy old_text from these lines exactly" in text and "line-number prefix" in text
    text, _ = t["edit_file"].call(
        {"path": "mod.py", "old_text": "    return x + 1", "new_text": ""}
    )
    assert "found 11 times (at lines 2, 29, 32" in text and "add surrounding lines" in text
    text, _ = t["edit_file"].call({"path": "mod.py", "old_text": "zzzz qqqq", "new_text": ""})
    assert "no line of the file is close to it" in text


def test_an_edit_returns_the_edited_region_numbered(project):
    (project / "mod.py").write_text(SOURCE)
    t = tools(project, coder=True)
    t["read_file"].call({"path": "mod.py"})
    text, is_error = t["edit_file"].call(
        {
            "path": "mod.py",
            "old_text": "def f10(x):\n    return x + 10\n",
            "new_text": "def f10(x):\n    y = x * 2\n    return y + 10\n",
        }
    )
    assert not is_error
    assert text.splitlines() == [
        "edited mod.py; lines 28–30 now read:",
        "    25\tdef f9(x):",
        "    26\t    return x + 9",
        "    27\t",
        "    28\tdef f10(x):",
        "    29\t    y = x * 2",
        "    30\t    return y + 10",
        "    31\t",
        "    32\tdef f11(x):",
        "    33\t    return x + 11",
    ]


def test_a_write_to_a_file_changed_since_the_model_read_it_is_refused(project):
    t = tools(project, coder=True)
    t["read_file"].call({"path": "src/app.py", "limit": 2})
    (project / "src" / "app.py").write_text("line 1\nchanged by a formatter\n")
    for name, args in (
        ("edit_file", {"old_text": "line 1", "new_text": "first"}),
        ("write_file", {"content": "overwritten\n"}),
    ):
        text, is_error = t[name].call({"path": "src/app.py", **args})
        assert (
            is_error and "changed since you last read it" in text and "read_file it again" in text
        )
    assert (project / "src" / "app.py").read_text() == "line 1\nchanged by a formatter\n"
    t["read_file"].call({"path": "src/app.py"})  # read again: the edit goes through
    assert not t["edit_file"].call(
        {"path": "src/app.py", "old_text": "line 1", "new_text": "first"}
    )[1]
    # its own writes count as seen: a second edit needs no read in between
    assert not t["edit_file"].call({"path": "src/app.py", "old_text": "first", "new_text": "1st"})[
        1
    ]
    assert not t["write_file"].call({"path": "src/app.py", "content": "new\n"})[1]
    # a binary file it looked at (read_file told it what it is) may be overwritten
    (project / "blob.bin").write_bytes(b"\x00\x01")
    assert "binary file" in t["read_file"].call({"path": "blob.bin"})[0]
    assert t["write_file"].call({"path": "blob.bin", "content": "text now\n"})[1] is False
    # a file deleted behind its back is refused too
    (project / "src" / "app.py").unlink()
    assert "changed since" in t["write_file"].call({"path": "src/app.py", "content": "x\n"})[0]


def test_a_change_to_a_file_the_model_never_read_is_refused_a_new_file_is_not(project):
    """Claude Code's read-before-edit rule: an existing file is changed only
    after the model read it in this conversation; creating one needs no read."""
    t = tools(project, coder=True)
    for name, args in (
        ("edit_file", {"old_text": "line 1\n", "new_text": "first\n"}),
        ("write_file", {"content": "overwritten\n"}),
    ):
        text, is_error = t[name].call({"path": "src/app.py", **args})
        assert is_error and "you have not read this file in this conversation" in text, name
        assert "read_file it first" in text
    assert (project / "src" / "app.py").read_text().startswith("line 1\n")
    assert not t["write_file"].call({"path": "src/brand_new.py", "content": "x = 1\n"})[1]
    assert not t["edit_file"].call({"path": "src/brand_new.py", "old_text": "1", "new_text": "2"})[
        1
    ]
    # a window of the file is a read of it
    t["read_file"].call({"path": "src/app.py", "offset": 3, "limit": 1})
    assert not t["edit_file"].call(
        {"path": "src/app.py", "old_text": "line 1\n", "new_text": "first\n"}
    )[1]
    # what the model read is kept by the caller between tool lists: a later round's list knows it
    seen: dict[str, str] = {}
    coder_tools(project, seen=seen)[0].call({"path": "src/app.py"})
    later = {tool.name: tool for tool in coder_tools(project, seen=seen)}
    assert not later["write_file"].call({"path": "src/app.py", "content": "again\n"})[1]
    fresh = {tool.name: tool for tool in coder_tools(project)}
    assert (
        "not read this file"
        in fresh["write_file"].call({"path": "src/app.py", "content": "x\n"})[0]
    )


@pytest.mark.parametrize(
    "name, good, bad, problem",
    [
        ("conf.json", '{"a": 1}\n', '{"a": 1,}\n', "valid JSON: line 1"),
        ("conf.yaml", "a: 1\n", "a: [1\nb: 2\n", "valid YAML: line 2"),
        ("conf.toml", "a = 1\n", "a = = 1\n", "valid TOML"),
        ("mod.py", "x = 1\n", "def f(:\n", "valid Python: line 1"),
    ],
)
def test_edits_and_writes_report_syntax_errors(project, name, good, bad, problem):
    t = tools(project, coder=True)
    assert "warning" not in t["write_file"].call({"path": name, "content": good})[0]
    text, is_error = t["edit_file"].call({"path": name, "old_text": good, "new_text": bad})
    assert not is_error and problem in text and "The change was saved; fix it" in text
    assert (project / name).read_text() == bad
    text, _ = t["write_file"].call({"path": name, "content": bad})
    assert problem in text
