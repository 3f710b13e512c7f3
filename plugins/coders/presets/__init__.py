"""Presets for well-known coding CLIs (``--coder claude|codex|aider|opencode``,
the same for ``--reviewer``), one module each beside this one, checked
against the real tools (the versions in :attr:`Preset.checked`; transcripts
of those versions are the contract tests' fixtures,
tests/fixtures/transcripts/<cli>-<version>/).

Every module has the same small interface: ``PRESET``, a
:class:`~stepkit.plugins.coders.presets.base.Preset` built from its
``command(call)``, its ``read(output, scratch)`` and, where the tool needs
them, its ``env(call)`` and ``leftovers``.  What they share is
:mod:`stepkit.plugins.coders.presets.base`.  A new preset is one module
more, added to :data:`PRESETS`.
"""

from __future__ import annotations

import shutil
from typing import Any

from stepkit.plugins.coders.presets import aider, claude, codex, opencode
from stepkit.plugins.coders.presets.base import Preset

PRESETS: dict[str, Preset] = {
    module.PRESET.name: module.PRESET for module in (claude, codex, aider, opencode)
}


def preset_status() -> list[dict[str, Any]]:
    """Every preset: its CLI on PATH (``path``, ``version``: None when it is
    missing), the versions it was checked against and how to install it."""
    rows = []
    for preset in PRESETS.values():
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
