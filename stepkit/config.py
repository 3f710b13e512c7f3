"""Project configuration: ``stepkit.toml`` or ``[tool.stepkit]`` in ``pyproject.toml``.

``stepkit.toml`` holds the same keys at its top level and wins when both exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, ConfigDict, Field, ValidationError

from stepkit.configfile import DEFAULT_PLANS_DIR, config_table, resolve_project_dir
from stepkit.errors import UsageError, describe_validation
from stepkit.models import Model
from stepkit.sandboxsettings import SandboxSettings

__all__ = ["Commands", "Config", "Timeouts", "load_config", "resolve_project_dir"]

#: ``[commands]`` and ``[timeouts]`` take the tests gate as ``test`` or ``tests``.
_TESTS_GATE = AliasChoices("tests", "test")


class Timeouts(Model):
    """Wall-clock and no-output limits in seconds (the step protocol's defaults)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    format: float = 300
    lint: float = 300
    build: float = 600
    tests: float = Field(default=1200, validation_alias=_TESTS_GATE)
    no_output: float = 600
    coder: float = 3600
    reviewer: float = 1200
    run: float = 7200


class Commands(Model):
    """Explicit gate commands; an empty string means "this gate has no command"."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    format: str | None = None
    lint: str | None = None
    build: str | None = None
    test: str | None = Field(default=None, validation_alias=_TESTS_GATE)


class Config(Model):
    """The ``[tool.stepkit]`` table."""

    model_config = ConfigDict(extra="allow")

    plugins: list[str] = Field(default_factory=list)
    commands: Commands = Field(default_factory=Commands)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    models: dict[str, str] = Field(default_factory=dict)
    engine: str | None = None
    coder: str | None = None
    reviewer: str | None = None
    plans_dir: str = DEFAULT_PLANS_DIR
    reuse_coder_evidence: bool = True
    #: how a failing gate is judged against the tree before the step (see
    #: :mod:`stepkit.workspace.verdicts`): ``new-failures`` passes it when
    #: every failure is pre-existing or flaky, ``strict`` lists them but keeps
    #: the exit code's verdict, ``off`` re-runs nothing and runs no baseline
    baseline: Literal["new-failures", "strict", "off"] = "new-failures"
    #: run every step in a git work tree of its own (``stepkit run --worktree``)
    worktree: bool = False
    source: str | None = None


def load_config(project_dir: Path) -> Config:
    """Read the project's stepkit configuration; defaults when there is none.

    Raises :class:`UsageError` (one line naming the file) when a file is
    unreadable or a value has the wrong type.
    """
    table, source = config_table(project_dir)
    if source is None:
        return Config()
    try:
        config = Config.model_validate(table)
    except ValidationError as exc:
        raise UsageError(f"{source}: stepkit setting {describe_validation(exc)}") from None
    config.source = str(source)
    return config
