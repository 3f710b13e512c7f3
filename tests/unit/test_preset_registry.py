"""The presets table (``stepkit_register_presets``, stepkit/presets.py): who
wins a name, what a bad registration says, when the table is collected, and
that the up-front checks of a command read it."""

from __future__ import annotations

import pytest

from stepkit import hookimpl
from stepkit.errors import PluginError, UsageError
from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.coders.presets import PRESETS
from stepkit.plugins.coders.presets.base import Preset
from stepkit.presets import presets, registrations


def preset(name: str, install: str = "pipx install it") -> Preset:
    return Preset(
        name=name,
        command=lambda call: name,
        reader=lambda output, scratch: None,
        checked=("1.0",),
        install=install,
    )


class Registers:
    """A plugin registering ``presets``."""

    def __init__(self, *presets: object):
        self.presets = presets

    @hookimpl
    def stepkit_register_presets(self, register):
        for one in self.presets:
            register(one)


def test_the_built_ins_register_through_the_hook():
    pm = get_plugin_manager()
    assert presets(pm) == PRESETS
    assert {r.plugin for r in registrations(pm).values()} == {"stepkit.plugins.coders.presets"}
    assert presets(get_plugin_manager(disabled=["presets"])) == {}


def test_the_later_registered_plugin_wins_a_name_and_tryfirst_beats_all():
    pm = get_plugin_manager()
    mine = preset("claude", install="mine")
    pm.register(Registers(mine, preset("mycli")), "third")
    later = preset("mycli", install="later")
    pm.register(Registers(later), "local")
    table = registrations(pm)
    assert list(table) == ["claude", "codex", "aider", "opencode", "mycli"]
    assert (table["claude"].preset, table["claude"].overrides) == (
        mine,
        ("stepkit.plugins.coders.presets",),
    )
    assert (table["mycli"].preset, table["mycli"].plugin, table["mycli"].overrides) == (
        later,
        "local",
        ("third",),
    )

    class First:
        @hookimpl(tryfirst=True)
        def stepkit_register_presets(self, register):
            register(preset("mycli", install="first"))

    pm.register(First(), "first")  # the table is collected again: the hook's plugins changed
    assert registrations(pm)["mycli"].overrides == ("third", "local")
    assert presets(pm)["mycli"].install == "first"


def test_the_table_is_collected_once_per_plugin_manager():
    calls = []

    class Counting:
        @hookimpl
        def stepkit_register_presets(self, register):
            calls.append(1)
            register(preset("mycli"))

    pm = get_plugin_manager()
    pm.register(Counting(), "counting")
    assert presets(pm) == presets(pm) and "mycli" in presets(pm)
    assert calls == [1]


@pytest.mark.parametrize("bad", [object(), preset("my cli"), preset("../x"), preset("")])
def test_a_preset_without_a_usable_name_is_an_error_naming_the_plugin(bad):
    pm = get_plugin_manager()
    pm.register(Registers(bad), "sloppy")
    with pytest.raises(PluginError, match=r"^plugin 'sloppy': stepkit_register_presets: .*name"):
        presets(pm)


def test_a_registration_that_raises_is_one_error_naming_the_plugin():
    class Broken:
        @hookimpl
        def stepkit_register_presets(self, register):
            raise KeyError("cfg")

    pm = get_plugin_manager()
    pm.register(Broken(), "broken")
    with pytest.raises(PluginError, match=r"^plugin 'broken': .* failed: KeyError: 'cfg'$"):
        presets(pm)


def test_a_registered_preset_is_checked_before_the_run_like_a_built_in(tmp_path, monkeypatch):
    """stepkit_configure and stepkit_check_delegate receive the table: the
    plugin's CLI missing from PATH is the built-ins' usage error with its
    install hint; an unknown coder's message names the plugin's preset."""
    from stepkit.api import _check_up_front
    from stepkit.config import Config

    monkeypatch.setenv("PATH", str(tmp_path))
    pm = get_plugin_manager()
    pm.register(Registers(preset("mycli", install="pipx install mycli")), "third")
    settings = {"coder": "mycli", "reviewer": "command:true", "stages": ["implement"]}
    with pytest.raises(UsageError, match=r"the 'mycli' CLI is not on PATH \(install it: pipx"):
        _check_up_front(pm, Config(), settings, ())
    with pytest.raises(UsageError, match=r"a preset: claude, codex, aider, opencode, mycli;"):
        _check_up_front(pm, Config(), {**settings, "coder": "nocli"}, ())
