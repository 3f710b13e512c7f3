"""The declared type every project-type plugin binds its hooks through.

A project-type module declares one :class:`ProjectType` — how it reads a
project, its type name, and each gate's command, by name — and binds the
hookimpls that declaration makes::

    GO = ProjectType(
        markers=MARKERS[__name__],
        name="go",
        format="gofmt -l -w .",
        lint=_lint,
        build="go build ./...",
        tests="go test ./...",
    )
    globals().update(GO.hookimpls())

pluggy finds a hook by the module attribute's name, and :meth:`ProjectType.hookimpls`
names each one after its hook, so no order has to be kept anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from stepkit.gatetable import GATE_ORDER
from stepkit.hookspecs import hookimpl
from stepkit.plugins.projects import has_marker

#: What a project type reads from a project (its parsed manifest, its scripts …).
Seen = TypeVar("Seen")

#: A gate's command: a fixed string, or a function of what the type read
#: giving the command or None (no command for this project).
Command = str | Callable[[Seen], str | None]

#: A hook of a project-type plugin: the project dir (and a gate) in, a type name, a command or notes out.
Hook = Callable[..., Any]


@dataclass(frozen=True)
class ProjectType(Generic[Seen]):
    """One project type, declared by name.

    :param markers: the root files of the type (its entry in
        :data:`stepkit.plugins.projects.MARKERS`): without one of them the
        project is not of this type, ``read`` is not called and every hook
        answers None.  ``()``: ``read`` alone decides (the task runners).
    :param read: reads what the type needs from the project dir, once per hook
        call; None when the project is not of this type (then every hook of
        the type answers None).  Default: the project dir itself (a type
        recognised by its markers alone).
    :param name: the type name ``stepkit_detect_project`` answers, or a
        function of what was read for a type whose name depends on the
        project (jvm: ``maven`` or ``gradle``).
    :param format: the format gate's command (:data:`Command`); likewise
        ``lint``, ``build`` and ``tests``.  A gate left None is one the type
        has no opinion on (``stepkit_gate_command`` answers None for it); a
        type that declares no gate implements no ``stepkit_gate_command``,
        so ``stepkit plugins`` does not list one.
    :param notes: why the type passed over a command the project has (see
        ``stepkit_detect_notes``), from what it read; None: it never does.
    :param surface: the type's verification surface (see
        ``stepkit_verification_surface``): kind → glob patterns; None: it
        declares none.
    """

    name: str | Callable[[Seen], str | None]
    markers: tuple[str, ...] = ()
    read: Callable[[Path], Seen | None] = lambda project_dir: project_dir  # type: ignore[assignment,return-value]
    format: Command[Seen] | None = None
    lint: Command[Seen] | None = None
    build: Command[Seen] | None = None
    tests: Command[Seen] | None = None
    notes: Callable[[Seen], list[str]] | None = None
    surface: dict[str, list[str]] | None = None

    def seen(self, project_dir: Path) -> Seen | None:
        """What the type reads from ``project_dir``; None when it is not of this type."""
        if self.markers and not has_marker(project_dir, self.markers):
            return None
        return self.read(project_dir)

    def detect(self, project_dir: Path) -> str | None:
        """The type name when ``project_dir`` is of this type, else None."""
        seen = self.seen(project_dir)
        if seen is None:
            return None
        return self.name if isinstance(self.name, str) else self.name(seen)

    def command(self, gate: str, project_dir: Path) -> str | None:
        """``gate``'s command for ``project_dir``; None when the project is not
        of this type or the gate has no command in it."""
        declared: Command[Seen] | None = getattr(self, gate, None) if gate in GATE_ORDER else None
        if declared is None:
            return None
        seen = self.seen(project_dir)
        if seen is None:
            return None
        return declared if isinstance(declared, str) else declared(seen)

    def detect_notes(self, project_dir: Path) -> list[str]:
        """Why the type passed over commands ``project_dir`` has; ``[]`` when
        it is not of this type or there is nothing to say."""
        seen = self.seen(project_dir) if self.notes is not None else None
        return [] if seen is None or self.notes is None else self.notes(seen)

    def verification_surface(self, project_dir: Path) -> dict[str, list[str]] | None:
        """The declared surface when ``project_dir`` is of this type, else None."""
        return (
            self.surface
            if self.surface is not None and self.seen(project_dir) is not None
            else None
        )

    def hookimpls(self) -> dict[str, Hook]:
        """The hookimpls by hook name: ``stepkit_detect_project``,
        ``stepkit_gate_command`` when the type declares a gate's command,
        ``stepkit_detect_notes`` when it has notes,
        ``stepkit_verification_surface`` when it declares one."""
        hooks: dict[str, Hook] = {
            "stepkit_detect_project": _hookimpl("stepkit_detect_project", self.detect)
        }
        if any(getattr(self, gate, None) is not None for gate in GATE_ORDER):

            @hookimpl
            def stepkit_gate_command(gate: str, project_dir: Path) -> str | None:
                return self.command(gate, project_dir)

            hooks["stepkit_gate_command"] = stepkit_gate_command
        if self.notes is not None:
            hooks["stepkit_detect_notes"] = _hookimpl("stepkit_detect_notes", self.detect_notes)
        if self.surface is not None:
            hooks["stepkit_verification_surface"] = _hookimpl(
                "stepkit_verification_surface", self.verification_surface
            )
        return hooks


def _hookimpl(hook_name: str, answer: Hook) -> Hook:
    @hookimpl
    def hook(project_dir: Path) -> Any:
        return answer(project_dir)

    hook.__name__ = hook.__qualname__ = hook_name
    return hook
