"""The coding-CLI presets the plugins register (``stepkit_register_presets``):
one table per plugin manager, collected when first asked for.

Each plugin's ``register`` calls are taken in the order pluggy ranks the
implementations (built-ins, entry points, ``[tool.stepkit] plugins``,
``stepconf.py``; ``trylast`` before and ``tryfirst`` after the rest), so a
name registered again replaces the earlier preset: local beats third-party
beats built-in, as an answer of every other hook does.  The core keeps the
table and who registered what; what a preset is
(:class:`stepkit.plugins.coders.presets.base.Preset`) is the built-in
coders' business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from stepkit.errors import PluginError, StepkitError

#: A preset's name: a ``--coder``/``--reviewer`` spec, the CLI's executable
#: and part of its log files' names.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


@dataclass(frozen=True)
class Registration:
    """One preset of the table, and where it came from."""

    preset: Any
    #: the plugin that registered it
    plugin: str
    #: the plugins whose preset of the same name it replaced, earliest first
    overrides: tuple[str, ...] = ()


#: plugin manager → (the implementations the table was collected from, the table)
_TABLES: WeakKeyDictionary[Any, tuple[list[Any], dict[str, Registration]]] = WeakKeyDictionary()


def registrations(pm: Any) -> dict[str, Registration]:
    """Every registered preset by name, in the order the names were first
    registered (the built-ins' first); collected once per plugin manager,
    again only when its implementations of the hook changed.

    :raises PluginError: a plugin registered an object without a valid
        name, or its implementation raised."""
    impls = [
        impl
        for impl in pm.hook.stepkit_register_presets.get_hookimpls()
        if not (impl.wrapper or impl.hookwrapper)  # a wrapper has nothing to register
    ]
    kept = _TABLES.get(pm)
    if kept is not None and kept[0] == impls:
        return kept[1]
    table: dict[str, Registration] = {}
    for impl in impls:  # pluggy calls the last of these first: here it registers last, and wins
        plugin = impl.plugin_name

        def register(preset: Any, plugin: str = plugin) -> None:
            name = getattr(preset, "name", None)
            if not isinstance(name, str) or not NAME.match(name):
                raise PluginError(
                    f"plugin {plugin!r}: stepkit_register_presets: a preset's name must be "
                    f"letters, digits, '.', '_' or '-' (its CLI's executable), not {name!r}"
                )
            earlier = table.get(name)
            overrides = () if earlier is None else earlier.overrides
            if earlier is not None and earlier.plugin != plugin:
                overrides = (*overrides, earlier.plugin)
            table[name] = Registration(preset, plugin, overrides)

        given = {"register": register}
        try:
            impl.function(*(given[name] for name in impl.argnames))
        except StepkitError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken plugin is one line naming it
            raise PluginError(
                f"plugin {plugin!r}: stepkit_register_presets failed: {type(exc).__name__}: {exc}"
            ) from None
    _TABLES[pm] = (impls, table)
    return table


def presets(pm: Any) -> dict[str, Any]:
    """The registered presets by name (see :func:`registrations`)."""
    return {name: registration.preset for name, registration in registrations(pm).items()}
