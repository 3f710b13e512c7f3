"""A built-in's hooks read from its source (stepkit/hooksource.py): the
forms a hookimpl is written in, the forms that leave it to an import, and
the cache in the state dir — reused while the source is unchanged, read
again when it changes, parsed around when corrupt or unwritable, and never
written outside the state dir."""

from __future__ import annotations

import json
import os

import pytest

from stepkit import hooksource
from stepkit.hooksource import Unreadable, cache_file, module_hooks, read_hooks
from stepkit.workspace.files import state_home

PLUGIN = '''"""A plugin; its docstring shows a hookimpl that is not one:

@hookimpl
def stepkit_not_a_hook():
    pass
"""

import stepkit
from stepkit.hookspecs import hookimpl


@hookimpl
def stepkit_gate_command(gate, project_dir):
    @hookimpl
    def stepkit_nested():  # not at the top level: not the module's
        pass

    return None


@stepkit.hookimpl(
    trylast=True,
    tryfirst=False,
)
def stepkit_condense_output(gate, output):
    return None


@hookimpl(specname="stepkit_tools")
async def tools_of_mine():
    return []


def stepkit_undecorated():
    return None
'''


@pytest.fixture(autouse=True)
def _fresh_memory(monkeypatch):
    """Each test starts as a new process does: nothing read yet."""
    monkeypatch.setattr(hooksource, "_memory", {})


def test_hookimpls_are_read_with_their_true_options():
    assert read_hooks(PLUGIN) == {
        "stepkit_gate_command": {},
        "stepkit_condense_output": {"trylast": True},
        "stepkit_tools": {},
    }


@pytest.mark.parametrize(
    "source",
    [
        "globals().update(PYTHON.hookimpls())\n",
        "from x import hookimpl, TRY\n\n@hookimpl(tryfirst=TRY)\ndef stepkit_tools():\n    pass\n",
        "from x import hookimpl\n\n@hookimpl(**{'tryfirst': True})\ndef stepkit_tools():\n    pass\n",
        "from x import marker\n\n@marker.hookimpl(True)\ndef stepkit_tools():\n    pass\n",
        "import stepkit\n\ndef tools():\n    pass\n\nstepkit_tools = stepkit.hookimpl(tools)\n",
    ],
    ids=["bound-at-import", "option-not-literal", "options-unpacked", "positional", "assigned"],
)
def test_what_only_an_import_tells_is_unreadable(source):
    with pytest.raises(Unreadable):
        read_hooks(source)


def _plugin(tmp_path, text=PLUGIN):
    path = tmp_path / "plugin.py"
    path.write_text(text, encoding="utf-8")
    return path


def _cache(tmp_path):
    return cache_file(tmp_path)


def _no_parsing(monkeypatch):
    def refuse(source):
        raise AssertionError("parsed although the cache holds it")

    monkeypatch.setattr(hooksource, "read_hooks", refuse)


def test_the_cache_is_written_in_the_state_dir_and_read_instead_of_the_source(
    tmp_path, monkeypatch
):
    path = _plugin(tmp_path)
    cache = _cache(tmp_path)
    first = module_hooks({"plugin": path}, cache)
    assert cache.parent.parent == state_home() and cache.is_file()
    monkeypatch.setattr(hooksource, "_memory", {})  # a new process
    _no_parsing(monkeypatch)
    assert module_hooks({"plugin": path}, cache) == first
    assert first["plugin"] == read_hooks(PLUGIN)


@pytest.mark.parametrize("same", ["size", "time"])
def test_an_edited_module_is_read_again(tmp_path, monkeypatch, same):
    """A hook more, the file keeping its size or its time: the key's other
    half tells the edit."""
    path = _plugin(tmp_path)
    cache = _cache(tmp_path)
    module_hooks({"plugin": path}, cache)
    info = path.stat()
    edited = PLUGIN.replace("\ndef stepkit_undecorated", "\n@hookimpl\ndef stepkit_undecorated")
    if same == "size":
        comment = "# not at the top level: not the module's"
        edited = edited.replace(comment, comment[: -len("@hookimpl\n")])
        assert len(edited) == len(PLUGIN)
    path.write_text(edited, encoding="utf-8")
    moved = 1 if same == "size" else 0
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + moved))
    monkeypatch.setattr(hooksource, "_memory", {})  # a new process
    assert "stepkit_undecorated" in module_hooks({"plugin": path}, cache)["plugin"]
    # within one process too: its memory is keyed as the cache is
    path.write_text(PLUGIN, encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert "stepkit_undecorated" not in module_hooks({"plugin": path}, cache)["plugin"]


@pytest.mark.parametrize(
    "content",
    [
        b"\x00not json",
        b"[1, 2]",
        json.dumps({"format": hooksource.FORMAT, "modules": {"X": {"key": 1}}}).encode(),
        b"",
    ],
    ids=["binary", "not-a-table", "malformed-entry", "empty"],
)
def test_a_corrupt_cache_is_parsed_around_and_rewritten(tmp_path, content):
    path = _plugin(tmp_path)
    cache = _cache(tmp_path)
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    assert module_hooks({"plugin": path}, cache)["plugin"] == read_hooks(PLUGIN)
    assert json.loads(cache.read_bytes())["modules"][str(path)]["hooks"] == read_hooks(PLUGIN)


def test_a_forged_entry_of_the_right_key_but_wrong_shape_is_read_again(tmp_path):
    path = _plugin(tmp_path)
    cache = _cache(tmp_path)
    module_hooks({"plugin": path}, cache)
    data = json.loads(cache.read_bytes())
    data["modules"][str(path)]["hooks"] = {"stepkit_tools": {"tryfirst": "yes"}}
    cache.write_text(json.dumps(data), encoding="utf-8")
    hooksource._memory.clear()
    assert module_hooks({"plugin": path}, cache)["plugin"] == read_hooks(PLUGIN)


def test_an_unwritable_cache_leaves_the_hooks_to_memory(tmp_path):
    path = _plugin(tmp_path)
    cache = _cache(tmp_path)
    cache.parent.parent.mkdir(parents=True)
    cache.parent.write_text("a file where the cache's directory goes", encoding="utf-8")
    assert module_hooks({"plugin": path}, cache)["plugin"] == read_hooks(PLUGIN)
    assert cache.parent.read_text(encoding="utf-8").startswith("a file")


def test_the_cache_is_never_written_through_a_link_out_of_the_state_dir(tmp_path):
    path = _plugin(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim.json"
    target.write_text("mine", encoding="utf-8")
    cache = _cache(tmp_path)
    cache.parent.mkdir(parents=True)
    cache.symlink_to(target)
    assert module_hooks({"plugin": path}, cache)["plugin"] == read_hooks(PLUGIN)
    assert target.read_text(encoding="utf-8") == "mine"
    assert not cache.is_symlink() and json.loads(cache.read_bytes())["format"] == hooksource.FORMAT
    # a linked directory on the way is not written through either
    hooksource._memory.clear()
    cache.unlink()
    cache.parent.rmdir()
    cache.parent.symlink_to(outside)
    path.write_text(PLUGIN + "\n", encoding="utf-8")
    assert module_hooks({"plugin": path}, cache)["plugin"] == read_hooks(PLUGIN)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.json"]


def test_a_module_that_cannot_be_read_is_left_to_an_import(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n", encoding="utf-8")
    found = module_hooks({"broken": broken, "gone": tmp_path / "gone.py"}, _cache(tmp_path))
    assert found == {"broken": None, "gone": None}
