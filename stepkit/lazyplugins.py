"""Built-in plugins registered without importing them.

A command imports only the built-ins whose hooks it calls.  Each built-in is
registered as a :class:`LazyPlugin`: a module object of the same name whose
attributes are stand-ins for the module's hookimpls, with the same hook
names and options (``tryfirst``, ``trylast``, wrappers), read from
:data:`stepkit.builtin_hooks.HOOKS`.  pluggy sees the same plugins, in the
same order, with the same hooks (``stepkit plugins`` lists them all, ``-p
no:NAME`` blocks them); the first call of a stand-in imports the real
module and calls its function from then on.

A project-type plugin answers nothing for a project that is not of its type.
:data:`DETECTED_BY` names the root files that make a project one of its type;
while none of them exists in the ``project_dir`` a hook is called with, its
stand-ins answer None without importing it (a Python project imports the
Python plugin, not the seventeen others).  tests/unit/test_lazy_plugins.py
checks both: that :data:`~stepkit.builtin_hooks.HOOKS` is what the modules
declare, and that every hook of a plugin in :data:`DETECTED_BY` answers
nothing in a directory holding every marker but its own.

An evidence parser answers nothing for output that is not its tool's: its
stand-in asks the function :data:`ANSWERS_ONLY_WHEN` names for its package
(``stepkit.plugins.evidence._shared.may_answer``) first, and while the
answer is no it answers None without importing the parser.

``python tests/unit/test_lazy_plugins.py`` writes :mod:`stepkit.builtin_hooks`
again from the modules (:func:`render_hooks`).
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import inspect
import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from stepkit import hookspecs

#: Root files (names or ``*`` patterns) without which a project-type plugin's
#: hooks answer nothing: the files its ``read`` looks for.
DETECTED_BY: dict[str, tuple[str, ...]] = {
    "stepkit.plugins.projects.zig": ("build.zig",),
    "stepkit.plugins.projects.swift": ("Package.swift",),
    "stepkit.plugins.projects.php": ("composer.json",),
    "stepkit.plugins.projects.elixir": ("mix.exs",),
    "stepkit.plugins.projects.ruby": ("Gemfile", "*.gemspec"),
    "stepkit.plugins.projects.cmake": ("CMakeLists.txt",),
    "stepkit.plugins.projects.dotnet": ("*.sln", "*.slnx", "*.csproj", "*.fsproj", "*.vbproj"),
    "stepkit.plugins.projects.jvm": (
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
    ),
    "stepkit.plugins.projects.python": (
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Pipfile",
        "tox.ini",
        "noxfile.py",
    ),
    "stepkit.plugins.projects.node": ("package.json",),
    "stepkit.plugins.projects.deno": ("deno.json", "deno.jsonc"),
    "stepkit.plugins.projects.go": ("go.mod",),
    "stepkit.plugins.projects.rust": ("Cargo.toml",),
}

#: Packages of built-ins that answer only some calls, each with the function
#: (``module:name``, imported by name as the built-ins are) that tells from a
#: plugin's name and a call's arguments whether the plugin may answer it;
#: while it says no, the stand-in answers None without importing the plugin.
ANSWERS_ONLY_WHEN: dict[str, str] = {
    "stepkit.plugins.evidence.": "stepkit.plugins.evidence._shared:may_answer",
}


class LazyPlugin(ModuleType):
    """Stands in for the built-in module ``name`` until one of its hooks is called.

    :param hooks: hook name → the hookimpl's options (as :data:`stepkit.builtin_hooks.HOOKS`).
    :param may_answer: given a call's arguments by name, False when the module
        certainly answers None (its stand-in then answers None without
        importing it); None: it may always answer.
    """

    def __init__(
        self,
        name: str,
        hooks: dict[str, dict[str, bool]],
        may_answer: Callable[[dict[str, Any]], bool] | None = None,
    ):
        super().__init__(name)
        self.__stepkit_may_answer__ = may_answer
        self.__stepkit_module__: ModuleType | None = None
        for hook_name, options in hooks.items():
            # options: hookimpl's boolean flags by name, which its overloads cannot match
            marker = hookspecs.hookimpl(**options)  # type: ignore[call-overload]
            setattr(self, hook_name, marker(self._stand_in(hook_name)))

    def module(self) -> ModuleType:
        """The real module, imported on first use."""
        if self.__stepkit_module__ is None:
            self.__stepkit_module__ = importlib.import_module(self.__name__)
        return self.__stepkit_module__

    def _stand_in(self, hook_name: str) -> Callable[..., Any]:
        spec = getattr(hookspecs, hook_name)
        names = _argument_names(hook_name)
        forward: list[
            Callable[..., Any]
        ] = []  # the real function taking the spec's arguments by name

        def stand_in(*args: Any) -> Any:
            given = dict(zip(names, args, strict=False))
            if self.__stepkit_may_answer__ is not None and not self.__stepkit_may_answer__(given):
                return None
            if not forward:
                forward.append(_by_name(getattr(self.module(), hook_name)))
            return forward[0](given)

        # pluggy reads a hookimpl's argument names from the function it wraps:
        # the hookspec's, so every argument reaches the stand-in in the spec's order
        stand_in.__wrapped__ = spec  # type: ignore[attr-defined]
        stand_in.__name__ = stand_in.__qualname__ = hook_name
        return stand_in


@functools.cache
def _argument_names(hook_name: str) -> tuple[str, ...]:
    """The hookspec's argument names, read once per hook (every built-in's stand-in asks)."""
    return tuple(inspect.signature(getattr(hookspecs, hook_name)).parameters)


def _by_name(function: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    """Call ``function`` with the arguments it takes (without a default) out of ``given``."""
    wanted = [
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return lambda given: function(*(given[name] for name in wanted))


def _in_project_of_type(markers: tuple[str, ...], given: dict[str, Any]) -> bool:
    return _has_marker(given.get("project_dir"), markers)


def _asking(check: str, name: str, given: dict[str, Any]) -> bool:
    module, function = check.split(":")
    return getattr(importlib.import_module(module), function)(name, given)


def _has_marker(project_dir: object, markers: tuple[str, ...]) -> bool:
    """Whether one of ``markers`` exists in ``project_dir`` (True when the hook got no project dir)."""
    if not isinstance(project_dir, (str, os.PathLike)):
        return True
    names = None
    for marker in markers:
        if "*" not in marker:
            if os.path.lexists(os.path.join(project_dir, marker)):
                return True
            continue
        if names is None:
            try:
                names = os.listdir(project_dir)
            except OSError:
                names = []
        if fnmatch.filter(names, marker):
            return True
    return False


def builtin_plugin(name: str) -> ModuleType:
    """The plugin to register for the built-in module ``name``: a :class:`LazyPlugin`
    when :data:`stepkit.builtin_hooks.HOOKS` knows it, else the imported module."""
    from stepkit.builtin_hooks import HOOKS

    hooks = HOOKS.get(name)
    if hooks is None or any(o.get("wrapper") or o.get("hookwrapper") for o in hooks.values()):
        return importlib.import_module(name)  # a wrapper must be the generator function itself
    may_answer = None
    if name in DETECTED_BY:
        may_answer = functools.partial(_in_project_of_type, DETECTED_BY[name])
    for package, check in ANSWERS_ONLY_WHEN.items():
        if name.startswith(package):
            may_answer = functools.partial(_asking, check, name)
    return LazyPlugin(name, HOOKS[name], may_answer)


def declared_hooks(module: ModuleType) -> dict[str, dict[str, bool]]:
    """The hookimpls ``module`` declares: hook name → the options set (true ones only)."""
    found = {}
    for attribute in sorted(dir(module)):
        options = getattr(getattr(module, attribute, None), "stepkit_impl", None)
        if isinstance(options, dict):
            found[options.get("specname") or attribute] = {k: v for k, v in options.items() if v}
    return found


def render_hooks(names: Iterable[str]) -> str:
    """The text of :mod:`stepkit.builtin_hooks` for the built-in modules ``names``."""
    lines = [
        '"""The hooks each built-in plugin implements, with their options: what',
        ":class:`stepkit.lazyplugins.LazyPlugin` registers before the module is",
        'imported.  Written by ``python tests/unit/test_lazy_plugins.py``; do not edit."""',
        "",
        "HOOKS: dict[str, dict[str, dict[str, bool]]] = {",
    ]
    for name in names:
        lines.append(f"    {name!r}: {{")
        lines += [
            f"        {hook!r}: {options!r},"
            for hook, options in declared_hooks(importlib.import_module(name)).items()
        ]
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"
