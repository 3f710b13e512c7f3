"""Project configuration: ``stepkit.toml`` or ``[tool.stepkit]`` in ``pyproject.toml``.

``stepkit.toml`` holds the same keys at its top level and wins when both exist.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from stepkit.errors import UsageError, describe_validation

#: ``[commands]`` and ``[timeouts]`` take the tests gate as ``test`` or ``tests``.
_TESTS_GATE = AliasChoices("tests", "test")


class Timeouts(BaseModel):
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


class Commands(BaseModel):
    """Explicit gate commands; an empty string means "this gate has no command"."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    format: str | None = None
    lint: str | None = None
    build: str | None = None
    test: str | None = Field(default=None, validation_alias=_TESTS_GATE)


class Config(BaseModel):
    """The ``[tool.stepkit]`` table."""

    model_config = ConfigDict(extra="allow")

    plugins: list[str] = Field(default_factory=list)
    commands: Commands = Field(default_factory=Commands)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    models: dict[str, str] = Field(default_factory=dict)
    engine: str | None = None
    coder: str | None = None
    reviewer: str | None = None
    plans_dir: str = "plans"
    reuse_coder_evidence: bool = True
    #: how a failing gate is judged against the tree before the step (see
    #: :mod:`stepkit.workspace.verdicts`): ``new-failures`` passes it when
    #: every failure is pre-existing or flaky, ``strict`` lists them but keeps
    #: the exit code's verdict, ``off`` re-runs nothing and runs no baseline
    baseline: Literal["new-failures", "strict", "off"] = "new-failures"
    source: str | None = None


def resolve_project_dir(project_dir: str | Path) -> Path:
    """The project dir as an absolute path.

    :raises UsageError: it is not a directory.
    """
    project = Path(project_dir).expanduser().resolve()
    if not project.is_dir():
        raise UsageError(f"project dir {project_dir} is not a directory")
    return project


def load_config(project_dir: Path) -> Config:
    """Read the project's stepkit configuration; defaults when there is none.

    Raises :class:`UsageError` (one line naming the file) when a file is
    unreadable or a value has the wrong type.
    """
    stepkit_toml = project_dir / "stepkit.toml"
    pyproject = project_dir / "pyproject.toml"
    if stepkit_toml.is_file():
        table, source = _read_toml(stepkit_toml), stepkit_toml
    elif pyproject.is_file():
        table, source = _read_toml(pyproject).get("tool", {}).get("stepkit", {}), pyproject
    else:
        return Config()
    try:
        config = Config.model_validate(table)
    except ValidationError as exc:
        raise UsageError(f"{source}: stepkit setting {describe_validation(exc)}") from None
    config.source = str(source)
    return config


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read configuration: {exc}") from None
