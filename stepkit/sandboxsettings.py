"""The ``[sandbox]`` table of the project's configuration: how the coder and
the code under test are confined (:mod:`stepkit.workspace.sandbox`)."""

from __future__ import annotations

from pydantic import ConfigDict, Field, StrictBool, field_validator

from stepkit.models import Model


class SandboxSettings(Model):
    """``[sandbox]``.

    :ivar required: refuse to start a run that cannot confine its coder.
    :ivar network: confined commands keep the network (CLI coders call their
        model's API); false gives each its own empty network namespace.
    :ivar writable: paths confined commands may write besides the step's
        tree (``~`` is the home directory; relative paths are the project's).
    :ivar readable: paths they may read that stepkit hides otherwise.
    """

    model_config = ConfigDict(extra="forbid")

    required: StrictBool = False
    network: StrictBool = True
    writable: list[str] = Field(default_factory=list, max_length=64)
    readable: list[str] = Field(default_factory=list, max_length=64)

    @field_validator("writable", "readable")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not path.strip() or "\0" in path:
                raise ValueError("a path must be a non-empty string")
            if path.strip().rstrip("/") in ("", "~"):
                raise ValueError(f"{path!r} would open the whole of it; name a directory inside")
        return paths
