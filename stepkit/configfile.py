"""Where the project's stepkit configuration is, read as a plain table:
``stepkit.toml`` (wins) or ``[tool.stepkit]`` in ``pyproject.toml``.

:mod:`stepkit.config` checks the table against its model; what needs only
``plans_dir`` (``stepkit status``) reads it here, without pydantic.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from stepkit.errors import UsageError

#: The plan repo's directory, relative to the project, when nothing sets one.
DEFAULT_PLANS_DIR = "plans"


def resolve_project_dir(project_dir: str | Path) -> Path:
    """The project dir as an absolute path.

    :raises UsageError: it is not a directory.
    """
    project = Path(project_dir).expanduser().resolve()
    if not project.is_dir():
        raise UsageError(f"project dir {project_dir} is not a directory")
    return project


def config_table(project_dir: Path) -> tuple[dict[str, Any], Path | None]:
    """The stepkit table and the file it came from ({} and None: no configuration).

    :raises UsageError: the file cannot be read or is not TOML (one line).
    """
    stepkit_toml = project_dir / "stepkit.toml"
    pyproject = project_dir / "pyproject.toml"
    if stepkit_toml.is_file():
        return _read_toml(stepkit_toml), stepkit_toml
    if pyproject.is_file():
        return _read_toml(pyproject).get("tool", {}).get("stepkit", {}), pyproject
    return {}, None


def plain_plans_dir(project_dir: Path) -> str | None:
    """The configured ``plans_dir`` when the table sets nothing else (read as
    it is, no model needed); None when it sets more, which the caller checks
    whole with :func:`stepkit.config.load_config`, so a bad setting is the
    same one-line error everywhere."""
    table, _ = config_table(project_dir)
    if set(table) <= {"plans_dir"} and isinstance(table.get("plans_dir", ""), str):
        return table.get("plans_dir") or DEFAULT_PLANS_DIR
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read configuration: {exc}") from None
