"""Project configuration: ``stepkit.toml`` or ``[tool.stepkit]`` in ``pyproject.toml``.

``stepkit.toml`` holds the same keys at its top level and wins when both exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

from annotated_types import Ge, Gt, Le
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    create_model,
    field_validator,
)
from pydantic.fields import FieldInfo

from stepkit import gatetable
from stepkit.configfile import DEFAULT_PLANS_DIR, config_table, resolve_project_dir
from stepkit.errors import UsageError, describe_validation
from stepkit.models import Model
from stepkit.sandboxsettings import SandboxSettings

__all__ = [
    "Commands",
    "Config",
    "Logs",
    "Timeouts",
    "WorktreeSettings",
    "load_config",
    "resolve_project_dir",
]

#: The longest limit a setting may give, in seconds: a day.
MAX_SECONDS = 86_400
#: A limit in seconds: a number (a boolean is none) above 0 and at most a day.
Seconds = Annotated[float, Field(strict=True, gt=0, le=MAX_SECONDS)]


class _Limits(Model):
    """Wall-clock and no-output limits in seconds (the step protocol's
    defaults); :data:`Timeouts` adds one per gate of the gate table."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    no_output: Seconds = 600
    coder: Seconds = 3600
    reviewer: Seconds = 1200
    run: Seconds = 7200

    def gate(self, name: str) -> float:
        """The wall-clock limit of gate ``name``."""
        return float(getattr(self, name))


class _GateCommands(Model):
    """Explicit gate commands; an empty string means "this gate has no
    command".  :data:`Commands` has one field per gate of the gate table."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def gate(self, name: str) -> str | None:
        """The command set for gate ``name`` (None: none set)."""
        value = getattr(self, gatetable.gate(name).keys[0])
        return value if isinstance(value, str) else None


def _gate_fields(field: Callable[[gatetable.Gate], tuple[str, Any]]) -> dict[str, Any]:
    """One field per gate of the table, named by ``field``, taking the gate's
    name or any of its keys (the name first, when a setting gives both)."""
    fields = {}
    for row in gatetable.GATES:
        name, (kind, default) = field(row)
        keys = dict.fromkeys((row.name, *row.keys))
        fields[name] = (kind, Field(default=default, validation_alias=AliasChoices(*keys)))
    return fields


# Built from the gate table, so a gate added there is configurable with no change here;
# the type checker sees the bases (a gate's field is read through ``gate(name)``).
if TYPE_CHECKING:
    Timeouts = _Limits
    Commands = _GateCommands
else:
    Timeouts = create_model(
        "Timeouts",
        __base__=_Limits,
        __module__=__name__,
        **_gate_fields(lambda row: (row.name, (Seconds, row.timeout))),
    )
    Timeouts.__doc__ = _Limits.__doc__
    Commands = create_model(
        "Commands",
        __base__=_GateCommands,
        __module__=__name__,
        **_gate_fields(lambda row: (row.keys[0], (str | None, None))),
    )
    Commands.__doc__ = _GateCommands.__doc__


class Logs(Model):
    """``[logs]``: how much of a command's output its log keeps, and how long
    finished runs' logs are kept (``stepkit gc``, and at the end of a run)."""

    model_config = ConfigDict(extra="forbid")

    #: a log keeps its head, the lines naming a failure and its tail in this many MB
    max_mb: Annotated[float, Field(strict=True, ge=1, le=100_000)] = 50
    #: logs of finished runs older than this many days are pruned (0: never by age)
    keep_days: Annotated[float, Field(strict=True, ge=0)] = 30
    #: the logs of the newest this many finished runs are kept (0: any number)
    keep_runs: Annotated[int, Field(strict=True, ge=0)] = 50

    @property
    def max_bytes(self) -> int:
        """The cap of one log in bytes."""
        return int(self.max_mb * 1_000_000)


class WorktreeSettings(Model):
    """``[worktree]``: how ``stepkit run --worktree`` runs.  ``worktree = true``
    (or ``false``) stands for ``[worktree] default = true`` (``false``)."""

    model_config = ConfigDict(extra="forbid")

    #: run every step in a git work tree of its own (``stepkit run --worktree``)
    default: StrictBool = False
    #: the command that prepares a work tree's dependencies, run in the work
    #: tree's project dir before the step (None: the user's tree's dependency
    #: directories are linked in, :mod:`stepkit.worktrees.prepare`)
    setup: str | None = None


class Config(Model):
    """The ``[tool.stepkit]`` table."""

    model_config = ConfigDict(extra="allow")

    plugins: list[str] = Field(default_factory=list)
    commands: Commands = Field(default_factory=Commands)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    logs: Logs = Field(default_factory=Logs)
    models: dict[str, str] = Field(default_factory=dict)
    engine: str | None = None
    coder: str | None = None
    reviewer: str | None = None
    plans_dir: str = DEFAULT_PLANS_DIR
    reuse_coder_evidence: StrictBool = True
    #: how a failing gate is judged against the tree before the step (see
    #: :mod:`stepkit.workspace.verdicts`): ``new-failures`` passes it when
    #: every failure is pre-existing or flaky, ``strict`` lists them but keeps
    #: the exit code's verdict, ``off`` re-runs nothing and runs no baseline
    baseline: Literal["new-failures", "strict", "off"] = "new-failures"
    #: ``worktree = true|false`` or a ``[worktree]`` table
    worktree: WorktreeSettings = Field(default_factory=WorktreeSettings)
    source: str | None = None

    @field_validator("worktree", mode="before")
    @classmethod
    def _worktree_flag(cls, value: object) -> object:
        """``worktree = true`` is ``[worktree] default = true``."""
        if isinstance(value, bool):
            return {"default": value}
        if not isinstance(value, dict | WorktreeSettings):
            # pydantic reports a ValueError as the setting's error; a TypeError would escape
            raise ValueError("worktree takes true or false, or a [worktree] table")  # noqa: TRY004
        return value


def load_config(project_dir: Path) -> Config:
    """Read the project's stepkit configuration; defaults when there is none.

    Raises :class:`UsageError` (one line naming the file, the key, the
    value and what the key takes) when a file is unreadable or a value has
    the wrong type or is out of its range.
    """
    table, source = config_table(project_dir)
    if source is None:
        return Config()
    try:
        config = Config.model_validate(table)
    except ValidationError as exc:
        raise UsageError(f"{source}: stepkit setting {describe_setting(exc)}") from None
    config.source = str(source)
    return config


def describe_setting(exc: ValidationError) -> str:
    """The first bad setting as one line: ``timeouts.tests: Input should be
    greater than 0 (given -5; takes a number above 0 and at most 86400)``."""
    error = exc.errors(include_url=False)[0]
    info = _field(error["loc"])
    takes = _takes(info) if info is not None else None
    given = json.dumps(error["input"], default=str)
    detail = f"given {given}; takes {takes}" if takes else f"given {given}"
    return f"{describe_validation(exc)} ({detail})"


def _field(loc: tuple[int | str, ...]) -> FieldInfo | None:
    """The field of :class:`Config` that ``loc`` (pydantic's error location) names."""
    model: Any = Config
    info = None
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        info = next(
            (
                field
                for name, field in model.model_fields.items()
                if part == name
                or (
                    isinstance(field.validation_alias, AliasChoices)
                    and part in field.validation_alias.choices
                )
            ),
            None,
        )
        if info is None:
            return None
        model = info.annotation
    return info


def _takes(info: FieldInfo) -> str | None:
    """What a field takes, in words, from its type and bounds (None: nothing to add)."""
    kind = info.annotation
    if kind is bool:
        return "true or false"
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(map(str, get_args(kind)))
    if kind not in (int, float):
        return None
    noun = "a whole number" if kind is int else "a number"
    bounds = []
    for bound in info.metadata:
        if isinstance(bound, Gt):
            bounds.append(f"above {bound.gt:g}")
        elif isinstance(bound, Ge):
            bounds.append(f"of at least {bound.ge:g}")
        elif isinstance(bound, Le):
            bounds.append(f"at most {bound.le:g}")
    return " and ".join([f"{noun} {bounds[0]}", *bounds[1:]]) if bounds else noun
