"""Presets for well-known coding CLIs (``--coder claude|codex|aider|opencode``,
the same for ``--reviewer``), one module each beside this one, checked
against the real tools (the versions in :attr:`Preset.checked`; transcripts
of those versions are the contract tests' fixtures,
tests/fixtures/transcripts/<cli>-<version>/).

Every module has the same small interface: ``PRESET``, a
:class:`~stepkit.plugins.coders.presets.base.Preset` built from its
``command(call)``, its ``read(output, scratch)`` and, where the tool needs
them, its ``env(call)`` and ``leftovers``.  What they share is
:mod:`stepkit.plugins.coders.presets.base`.

This package is a plugin: it registers the built-ins through
``stepkit_register_presets``, the hook through which any plugin adds a
coding CLI; the coder and the reviewer run whatever is registered
(:func:`stepkit.presets.presets`).  A new built-in is one module more,
added to :data:`PRESETS`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.coders.presets import aider, claude, codex, opencode
from stepkit.plugins.coders.presets.base import Preset

#: The built-in presets by name.
PRESETS: dict[str, Preset] = {
    module.PRESET.name: module.PRESET for module in (claude, codex, aider, opencode)
}


@hookimpl
def stepkit_register_presets(register: Callable[[Preset], None]) -> None:
    """The built-in presets (claude, codex, aider, opencode)."""
    for preset in PRESETS.values():
        register(preset)


def preset_status(presets: Iterable[Preset]) -> list[dict[str, Any]]:
    """Each of ``presets``: its CLI on PATH (``path``, ``version``: None when it is
    missing), the versions it was checked against and how to install it."""
    rows = []
    for preset in presets:
        version = preset.version()
        rows.append(
            {
                "name": preset.name,
                "path": shutil.which(preset.name),
                "version": version,
                "checked": list(preset.checked),
                "checked_version": version in preset.checked,
                "install": preset.install,
            }
        )
    return rows
