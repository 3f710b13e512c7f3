"""Built-in plugins registered without importing them.

A command imports only the built-ins whose hooks it calls.  Each built-in is
registered as a :class:`LazyPlugin`: a module object of the same name whose
attributes are stand-ins for the module's hookimpls; pluggy sees the same
plugins, in the same order (``stepkit plugins`` lists them all, ``-p
no:NAME`` blocks them); the first call of a stand-in imports the real
module and calls its function from then on.  A stand-in's hooks are:

- for a project type (a module of :data:`stepkit.plugins.projects.MARKERS`):
  every hook a project type may implement
  (:data:`stepkit.plugins.projects.HOOKS`), each answering None where the
  module implements none;
- for any other built-in: those :data:`stepkit.builtin_hooks.HOOKS` lists,
  with their options (``tryfirst``, ``trylast``).

One dispatcher decides which calls may import a module: a built-in of a
package in :data:`ANSWERS_ONLY_WHEN` is asked the function named there
first, and while it says no, its stand-in answers None without importing
it.  A project type answers nothing without one of its markers (declared
once, in :data:`stepkit.plugins.projects.MARKERS`, which its
``ProjectType`` reads), so a Python project imports the Python plugin and
not the twelve others; an evidence parser answers nothing for output without
its markers (``stepkit.plugins.evidence._shared.MARKERS``).

``python tests/unit/test_lazy_plugins.py`` writes :mod:`stepkit.builtin_hooks`
again from the modules.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from stepkit import hookspecs

#: Packages of built-ins that answer only some calls, each with the function
#: (``module:name``, imported by name as the built-ins are) that tells from a
#: plugin's name and a call's arguments whether the plugin may answer it;
#: while it says no, the stand-in answers None without importing the plugin.
ANSWERS_ONLY_WHEN: dict[str, str] = {
    "stepkit.plugins.projects.": "stepkit.plugins.projects:may_answer",
    "stepkit.plugins.evidence.": "stepkit.plugins.evidence._shared:may_answer",
}


class LazyPlugin(ModuleType):
    """Stands in for the built-in module ``name`` until one of its hooks is called.

    :param hooks: hook name → the hookimpl's options (as :data:`stepkit.builtin_hooks.HOOKS`).
    :param may_answer: given a call's arguments by name, False when the module
        certainly answers None (its stand-in then answers None without
        importing it); None: it may always answer.
    :param exact: ``hooks`` are exactly the module's; False: they are its
        family's, some of which the module may not implement.
    """

    def __init__(
        self,
        name: str,
        hooks: dict[str, dict[str, bool]],
        may_answer: Callable[[dict[str, Any]], bool] | None = None,
        exact: bool = True,
    ):
        super().__init__(name)
        self.__stepkit_may_answer__ = may_answer
        self.__stepkit_hooks__ = sorted(hooks) if exact else None
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

    def implemented(self) -> list[str]:
        """The hooks the module implements (a family's stand-in imports it to tell)."""
        if self.__stepkit_hooks__ is None:
            self.__stepkit_hooks__ = sorted(declared_hooks(self.module()))
        return self.__stepkit_hooks__

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
                function = getattr(self.module(), hook_name, None)
                forward.append(_by_name(function) if function else lambda given: None)
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


#: The package whose modules are the project types (:data:`MARKERS` and
#: :data:`HOOKS` there say which and what they may answer).
PROJECT_TYPES = "stepkit.plugins.projects"


def _asking(check: str, name: str, given: dict[str, Any]) -> bool:
    module, function = check.split(":")
    return getattr(importlib.import_module(module), function)(name, given)


def builtin_plugin(name: str) -> ModuleType:
    """The plugin to register for the built-in module ``name``: a :class:`LazyPlugin`
    when its hooks are known before it is imported, else the imported module."""
    from stepkit.builtin_hooks import HOOKS

    # the project types' one declaration of their markers and hooks, by name
    # as every built-in is (the core reaches a plugin's code through hooks only)
    types = importlib.import_module(PROJECT_TYPES)
    family = name in types.MARKERS
    hooks = {hook: {} for hook in types.HOOKS} if family else HOOKS.get(name)
    if hooks is None or any(o.get("wrapper") or o.get("hookwrapper") for o in hooks.values()):
        return importlib.import_module(name)  # a wrapper must be the generator function itself
    may_answer = None
    for package, check in ANSWERS_ONLY_WHEN.items():
        if name.startswith(package):
            may_answer = functools.partial(_asking, check, name)
    return LazyPlugin(name, hooks, may_answer, exact=not family)


def declared_hooks(module: ModuleType) -> dict[str, dict[str, bool]]:
    """The hookimpls ``module`` declares: hook name → the options set (true ones only)."""
    found = {}
    for attribute in sorted(dir(module)):
        options = getattr(getattr(module, attribute, None), "stepkit_impl", None)
        if isinstance(options, dict):
            found[options.get("specname") or attribute] = {k: v for k, v in options.items() if v}
    return found


def render_hooks(names: Iterable[str]) -> str:
    """The text of :mod:`stepkit.builtin_hooks` for the built-in modules
    ``names`` but the project types (their hooks are the family's), as ``ruff
    format`` leaves it."""
    markers = importlib.import_module(PROJECT_TYPES).MARKERS
    lines = [
        '"""The hooks each built-in plugin but the project types implements, with',
        "their options: what :class:`stepkit.lazyplugins.LazyPlugin` registers",
        "before the module is imported.  Written by ``python",
        'tests/unit/test_lazy_plugins.py``; do not edit."""',
        "",
        "HOOKS: dict[str, dict[str, dict[str, bool]]] = {",
    ]
    for name in names:
        if name in markers:
            continue
        lines.append(f'    "{name}": {{')
        for hook, options in declared_hooks(importlib.import_module(name)).items():
            shown = ", ".join(f'"{option}": {value}' for option, value in options.items())
            lines.append(f'        "{hook}": {{{shown}}},')
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"
