"""A TOML file the detection reads is parsed once per content
(:func:`stepkit.plugins.projects._shared.read_toml`): the python plugin,
the tox reader and the task-runner scan each read ``pyproject.toml``, 17
parses of it before the first gate of a verify of itsdangerous, about 10 ms."""

from __future__ import annotations

import tomllib

from stepkit.plugins.projects import _shared


def _counted_parses(monkeypatch) -> list[str]:
    """Each parse of a TOML text or file through :mod:`tomllib` (the real one, counted)."""
    parses = []
    for name in ("load", "loads"):
        real = getattr(tomllib, name)

        def counted(source, _real=real, _name=name, **kwargs):
            parses.append(_name)
            return _real(source, **kwargs)

        monkeypatch.setattr(tomllib, name, counted)
    return parses


def test_the_same_file_read_again_is_not_parsed_again(tmp_path, monkeypatch):
    parses = _counted_parses(monkeypatch)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.ruff]\nline-length = 100\n[tool.tox]\nenv_list = ["py"]\n')
    first = _shared.read_toml(pyproject)
    for _ in range(5):
        assert _shared.read_toml(pyproject) == first
    assert first == {"tool": {"ruff": {"line-length": 100}, "tox": {"env_list": ["py"]}}}
    assert len(parses) == 1


def test_a_changed_file_is_read_as_it_is_now_and_a_reader_changes_no_other_reader(tmp_path):
    path = tmp_path / "ruff.toml"
    path.write_text("line-length = 100\n")
    seen = _shared.read_toml(path)
    seen["line-length"] = 1  # one reader's change to what it was given
    assert _shared.read_toml(path) == {"line-length": 100}
    path.write_text("line-length = 88\n")  # same size, as an edit within one mtime tick can be
    assert _shared.read_toml(path) == {"line-length": 88}
    path.write_text("line-length = \n")
    assert _shared.read_toml(path) == {}
    path.unlink()
    assert _shared.read_toml(path) == {}
