"""Built-in plugins registered without importing them.

A command imports only the built-ins whose hooks it calls.  Each built-in is
registered as a :class:`LazyPlugin`: a module object of the same name whose
attributes are stand-ins for the module's hookimpls; pluggy sees the same
plugins, in the same order (``stepkit plugins`` lists them all, ``-p
no:NAME`` blocks them); the first call of a stand-in imports the real
module and calls its function from then on.  A stand-in's hooks are:

- those the module's source declares, with their options (``tryfirst``,
  ``trylast``), read without importing it (:mod:`stepkit.hooksource`);
- for a project type that binds its ``ProjectType``'s hookimpls at import
  (which no reading of its source tells): every hook a project type may
  implement (:data:`stepkit.plugins.projects.HOOKS`), each answering None
  where the module implements none.

Any other built-in whose hooks its source does not tell (a hookimpl bound
other than by a decorator), or that has a wrapper (which must be the
generator function itself), is imported when it is registered.

One dispatcher decides which calls may import a module: a built-in of a
package in :data:`ANSWERS_ONLY_WHEN` is asked the function named there
first, and while it says no, its stand-in answers None without importing
it.  A project type answers nothing without one of its markers (declared
once, in :data:`stepkit.plugins.projects.MARKERS`, which its
``ProjectType`` reads), so a Python project imports the Python plugin and
not the twelve others; an evidence parser answers nothing for output without
its markers (``stepkit.plugins.evidence._shared.MARKERS``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from stepkit import hooksource, hookspecs

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

    :param hooks: hook name → the hookimpl's options (:data:`stepkit.hooksource.Hooks`).
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


#: The package of the built-ins, and that of the project types among them
#: (:data:`HOOKS` there says what they may answer).
BUILTINS = "stepkit.plugins"
PROJECT_TYPES = "stepkit.plugins.projects"


def _asking(check: str, name: str, given: dict[str, Any]) -> bool:
    module, function = check.split(":")
    return getattr(importlib.import_module(module), function)(name, given)


def builtin_plugins(names: list[str]) -> list[ModuleType]:
    """The plugins to register for the built-in modules ``names``, in order:
    each a :class:`LazyPlugin` when its hooks are known before it is
    imported, else the imported module."""
    package = importlib.import_module(BUILTINS)
    sources = {name: path for name in names if (path := _source_file(package, name))}
    cache = hooksource.cache_file(Path(package.__path__[0]))
    declared = hooksource.module_hooks(sources, cache)
    return [_builtin_plugin(name, declared.get(name)) for name in names]


def builtin_plugin(name: str) -> ModuleType:
    """The plugin to register for the built-in module ``name`` (:func:`builtin_plugins`)."""
    return builtin_plugins([name])[0]


def _builtin_plugin(name: str, hooks: hooksource.Hooks | None) -> ModuleType:
    family = hooks is None and name.startswith(PROJECT_TYPES + ".")
    if family:
        # by name, as every built-in is (the core reaches a plugin's code through hooks only)
        hooks = {hook: {} for hook in importlib.import_module(PROJECT_TYPES).HOOKS}
    if hooks is None or any(o.get("wrapper") or o.get("hookwrapper") for o in hooks.values()):
        return importlib.import_module(name)  # a wrapper must be the generator function itself
    may_answer = None
    for package, check in ANSWERS_ONLY_WHEN.items():
        if name.startswith(package):
            may_answer = functools.partial(_asking, check, name)
    return LazyPlugin(name, hooks, may_answer, exact=not family)


def _source_file(package: ModuleType, name: str) -> Path | None:
    """The source file of the built-in module ``name`` (under ``package``,
    which is not imported to find it), None when there is none."""
    if not name.startswith(package.__name__ + "."):
        return None
    *parents, last = name[len(package.__name__) + 1 :].split(".")
    for root in package.__path__:
        for path in (Path(root, *parents, f"{last}.py"), Path(root, *parents, last, "__init__.py")):
            if path.is_file():
                return path
    return None


def declared_hooks(module: ModuleType) -> dict[str, dict[str, bool]]:
    """The hookimpls ``module`` declares: hook name → the options set (true ones only)."""
    found = {}
    for attribute in sorted(dir(module)):
        options = getattr(getattr(module, attribute, None), "stepkit_impl", None)
        if isinstance(options, dict):
            found[options.get("specname") or attribute] = {k: v for k, v in options.items() if v}
    return found
