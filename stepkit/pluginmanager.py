"""Build a plugin manager: built-ins, entry points, the project's own plugins.

A fresh manager is built per command (never at import).  Registration order is
built-in → entry points (group ``stepkit``) → ``[tool.stepkit] plugins`` →
``stepconf.py``; pluggy calls the last registered first, so local beats
third-party beats built-in.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy
from pluggy import HookImpl

from stepkit import __version__, hookspecs
from stepkit.config import Config, load_config
from stepkit.errors import PluginError
from stepkit.lazyplugins import LazyPlugin, builtin_plugins
from stepkit.trust import require_trusted

#: Built-in plugins, in registration order, each imported when one of its hooks
#: is first called (:func:`stepkit.lazyplugins.builtin_plugins`).  Language plugins come before the
#: task runners so that a Makefile target answers before a language default;
#: the overrides plugin answers first of all through ``tryfirst``.
DEFAULT_PLUGINS: list[str] = [
    "stepkit.plugins.projects.unsupported",
    "stepkit.plugins.projects.zig",
    "stepkit.plugins.projects.swift",
    "stepkit.plugins.projects.php",
    "stepkit.plugins.projects.elixir",
    "stepkit.plugins.projects.ruby",
    "stepkit.plugins.projects.cmake",
    "stepkit.plugins.projects.dotnet",
    "stepkit.plugins.projects.jvm",
    "stepkit.plugins.projects.python",
    "stepkit.plugins.projects.node",
    "stepkit.plugins.projects.deno",
    "stepkit.plugins.projects.go",
    "stepkit.plugins.projects.rust",
    "stepkit.plugins.projects.precommit",
    "stepkit.plugins.projects.taskrunners",
    "stepkit.plugins.projects.ci",
    "stepkit.plugins.projects.format_check",
    "stepkit.plugins.projects.tool_dirs",
    "stepkit.plugins.overrides",
    "stepkit.plugins.evidence.generic",
    "stepkit.plugins.evidence.pytest",
    "stepkit.plugins.evidence.unittest",
    "stepkit.plugins.evidence.cargo",
    "stepkit.plugins.evidence.gotest",
    "stepkit.plugins.evidence.jest",
    "stepkit.plugins.evidence.ruff",
    "stepkit.plugins.evidence.mypy",
    "stepkit.plugins.evidence.eslint",
    "stepkit.plugins.evidence.tsc",
    "stepkit.plugins.evidence.maven",
    "stepkit.plugins.runners",
    "stepkit.plugins.tools",
    "stepkit.plugins.ask",
    "stepkit.plugins.llm.builtin_engines",
    "stepkit.plugins.llm.budget",
    "stepkit.plugins.stages.orient",
    "stepkit.plugins.stages.sweep",
    "stepkit.plugins.stages.handoff",
    "stepkit.plugins.stages.check_handoff",
    "stepkit.plugins.stages.plan",
    "stepkit.plugins.coders.presets",
    "stepkit.plugins.coders.command",
    "stepkit.plugins.coders.anthropic",
    "stepkit.plugins.coders.reviewer",
    "stepkit.plugins.observers.display",
]

ENTRY_POINT_GROUP = "stepkit"
ALLOW_LIST_ENV = "STEPKIT_LOAD_PLUGINS"

#: Built-ins that neither ``-p no:NAME`` nor the allow-list can switch off (as
#: pytest keeps its essential plugins): the deterministic handoff check, and
#: the gate answers (given answers, the terminal, the pause) that every
#: approval node relies on.
ESSENTIAL_PLUGINS: tuple[str, ...] = ("stepkit.plugins.stages.check_handoff", "stepkit.plugins.ask")


class StepkitPluginManager(pluggy.PluginManager):
    """pluggy's manager plus where each plugin came from, its version when
    known at loading, and the plugins that failed to load."""

    def __init__(self) -> None:
        super().__init__("stepkit")
        self.add_hookspecs(hookspecs)
        self.load_errors: dict[str, str] = {}
        self.origins: dict[str, str] = {}
        self.versions: dict[str, str] = {}
        #: the project's own plugins (stepconf.py, modules of the project named
        #: in [tool.stepkit] plugins), loaded because their bytes are trusted
        self.local: set[str] = set()
        #: the project dir and the configuration the manager was built with
        #: (:func:`project_config`: a command reads its configuration once)
        self.built_for: tuple[Path, Config] | None = None

    def register(
        self, plugin: object, name: str | None = None, origin: str = "", version: str | None = None
    ) -> str | None:
        """pluggy's ``register``, also recording the plugin's ``origin`` and
        ``version`` (built-ins: stepkit's; entry points: their distribution's).

        :return: the name registered, or None when the name is blocked
            (``-p no:NAME``, the allow-list): nothing is registered then.
        """
        registered = super().register(plugin, name)
        if registered is not None:
            self.origins[registered] = origin
            if version is not None:
                self.versions[registered] = version
        return registered


def get_plugin_manager(
    project_dir: Path | None = None,
    config: Config | None = None,
    disabled: tuple[str, ...] | list[str] = (),
    builtins: list[str] | None = None,
    entry_points: Collection[str] | None = None,
) -> StepkitPluginManager:
    """Build a fresh plugin manager for one command.

    :param project_dir: the project whose ``stepconf.py`` and configured
        plugins are loaded (None: built-ins and entry points only).
    :param config: the project's configuration (for ``plugins``).
    :param disabled: names from ``-p no:NAME`` (see :func:`_block`); blocked
        in the manager, so nothing registers under them later either.
    :param builtins: override :data:`DEFAULT_PLUGINS` (tests, custom hosts);
        the list is taken as given, essential plugins included or not.
    :param entry_points: the entry points a run found when it began
        (:func:`entry_point_ids`); one not among them (installed, or changed,
        while the run went on: at a resume) is not loaded, and is named in
        ``load_errors``.  None: every entry point loads.
    :raises PluginError: ``disabled`` names an essential plugin; a local plugin
        is not trusted (:func:`stepkit.trust.require_trusted`); a plugin the
        project asked for (``stepconf.py`` or a ``[tool.stepkit] plugins``
        entry) failed to load; or a plugin implements a hook that does not
        exist.
    """
    pm = StepkitPluginManager()
    builtins = DEFAULT_PLUGINS if builtins is None else builtins
    for name in disabled:
        _block(pm, name, builtins)
    allow = _allow_list()

    wanted = [module_name for module_name in builtins if not pm.is_blocked(module_name)]
    for module_name, plugin in zip(wanted, builtin_plugins(wanted), strict=True):
        pm.register(plugin, module_name, "builtin", __version__)

    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if not _wanted(pm, ep.name, allow):
            continue
        if entry_points is not None and _entry_point_id(ep) not in entry_points:
            pm.set_blocked(ep.name)
            pm.load_errors[ep.name] = (
                f"not loaded: entry point {ep.value} appeared after the run began"
            )
            continue
        try:
            pm.register(
                ep.load(), ep.name, f"entry point {ep.value}", ep.dist.version if ep.dist else None
            )
        except Exception as exc:  # noqa: BLE001 - a broken third-party plugin must not kill the run
            pm.load_errors[ep.name] = f"{type(exc).__name__}: {exc}"

    if project_dir is not None:
        specs = [spec for spec in (config.plugins if config else []) if _wanted(pm, spec, allow)]
        stepconf = project_dir / "stepconf.py"
        with_stepconf = stepconf.is_file() and _wanted(pm, "stepconf", allow)
        pm.local = require_trusted(project_dir, specs, stepconf if with_stepconf else None)
        for spec in specs:
            pm.register(_load_configured(project_dir, spec), spec, "[tool.stepkit] plugins")
        if with_stepconf:
            pm.register(_load_from_path(stepconf), "stepconf", str(stepconf))

    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r}: {exc}") from None
    if project_dir is not None and config is not None:
        pm.built_for = (project_dir, config)
    return pm


def project_config(pm: Any, project_dir: Path) -> Config:
    """The configuration of ``project_dir``: the one ``pm`` was built with
    for it (the CLI builds its manager first, to let plugins add options),
    else read now (:func:`stepkit.config.load_config`)."""
    built_for = getattr(pm, "built_for", None)
    if built_for is not None and built_for[0] == project_dir:
        return built_for[1]
    return load_config(project_dir)


def entry_point_ids() -> list[str]:
    """Every installed stepkit entry point as ``name=value (distribution)``:
    what a run records when it begins, so that one installed while it goes
    on (the coder runs as the user) never loads into it."""
    return sorted(
        {_entry_point_id(ep) for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    )


def _entry_point_id(ep: importlib.metadata.EntryPoint) -> str:
    dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist else "?"
    return f"{ep.name}={ep.value} ({dist})"


def first_answer(
    pm: pluggy.PluginManager,
    hook_name: str,
    *,
    without: Collection[str] = (),
    also: Collection[str] = (),
    **kwargs: Any,
) -> tuple[Any, str | None]:
    """Call a firstresult hook as pluggy calls it, and also say which plugin answered.

    Through pluggy's public API only: the hook's wrappers are called by pluggy
    (``call_extra`` on the hook without its plain implementations), around one
    extra implementation that calls the plain ones (``get_hookimpls()``) in
    pluggy's order (tryfirst, last registered, …, trylast) until one answers.
    So the order, the wrappers (``wrapper=True`` and the older
    ``hookwrapper=True``), exceptions and hook-call monitoring all apply.

    :return: ``(answer, plugin)``: the hook's result, as the wrappers left it,
        and the plugin whose implementation returned the first non-None
        result.  A wrapper may change the answer but is not the plugin that
        gave it; ``plugin`` is None when no implementation answered.
    :param without: names of plugins left out of this call, wrappers too
        (the driver leaves the local plugins out of the final approval).
    :param also: firstresult hooks whose plain implementations join the
        call as if they implemented ``hook_name`` (the deprecated aliases of
        a hook), in the order pluggy would call them were they one hook's;
        each is passed the arguments it names.  Their wrappers wrap the
        implementations, inside the wrappers of ``hook_name``.
    :raises ValueError: ``hook_name`` is not a firstresult hook.
    :raises TypeError: a plugin implementing the hook is not hashable
        (pluggy's subset hook callers keep plugins in a set).
    """
    hook = getattr(pm.hook, hook_name)
    if hook.spec is None or not hook.spec.opts.get("firstresult"):
        raise ValueError(f"{hook_name} is not a firstresult hook")
    left_out = {plugin for name in without if (plugin := pm.get_plugin(name)) is not None}

    def plain_of(name: str) -> list[HookImpl]:
        return [
            impl
            for impl in getattr(pm.hook, name).get_hookimpls()
            if not (impl.wrapper or impl.hookwrapper) and impl.plugin not in left_out
        ]

    own = plain_of(hook_name)
    plain = _as_one_hook(pm, [*own, *(i for name in also for i in plain_of(name))]) if also else own
    answered: list[str] = []

    def first_of_plain() -> Any:
        for impl in reversed(plain):  # pluggy calls the last of get_hookimpls() first
            missing = [name for name in impl.argnames if name not in kwargs]
            if missing:
                raise pluggy.HookCallError(f"hook call must provide argument {missing[0]!r}")
            result = impl.function(*(kwargs[name] for name in impl.argnames))
            if result is not None:
                answered.append(impl.plugin_name)
                return result
        return None

    # the aliases' wrappers wrap the plain implementations, the hook's own wrap them all
    call = first_of_plain
    for name in [*also, hook_name]:
        call = _wrapped(pm, name, call, left_out, kwargs)
    answer = call()
    return answer, answered[0] if answered else None


def _wrapped(
    pm: pluggy.PluginManager,
    hook_name: str,
    inner: Callable[[], Any],
    left_out: set[object],
    kwargs: Mapping[str, Any],
) -> Callable[[], Any]:
    """``inner`` called as the one plain implementation of ``hook_name``, so
    that pluggy calls the hook's wrappers (but those of ``left_out``) around it."""
    hook = getattr(pm.hook, hook_name)
    plain = {impl.plugin for impl in hook.get_hookimpls() if not (impl.wrapper or impl.hookwrapper)}

    def extra(*_args: Any) -> Any:
        return inner()

    # pluggy reads an implementation's argument names from the function it wraps
    extra.__wrapped__ = hook.spec.function  # type: ignore[attr-defined]
    wrappers = pm.subset_hook_caller(hook_name, left_out | plain)
    given = {name: kwargs[name] for name in hook.spec.argnames if name in kwargs}
    return lambda: wrappers.call_extra([extra], given)


def _as_one_hook(pm: pluggy.PluginManager, impls: list[HookImpl]) -> list[HookImpl]:
    """``impls`` (of one hook or several) in the order ``get_hookimpls()`` of
    one hook would list them: trylast ones first (the first registered last),
    then the others in registration order, then the tryfirst ones; pluggy
    calls the last first."""
    registered = {plugin: index for index, (_, plugin) in enumerate(pm.list_name_plugin())}

    def place(impl: HookImpl) -> tuple[int, int]:
        index = registered.get(impl.plugin, len(registered))
        if impl.trylast:
            return (0, -index)
        return (2 if impl.tryfirst else 1, index)

    return sorted(impls, key=place)


def get_plugins(pm: StepkitPluginManager) -> list[dict[str, Any]]:
    """Describe every registered plugin: name, origin, version and hooks.

    The version is the one recorded at loading, else (a ``[tool.stepkit]
    plugins`` module, a plugin registered by other code) that of the installed
    distribution providing the plugin's module; None for a module no
    distribution provides (``stepconf.py``, a path plugin) or a plugin object.
    """
    provided = _Provided()
    result = [
        {
            "name": name,
            "origin": pm.origins.get(name, ""),
            "version": pm.versions.get(name) or provided.version(plugin),
            "hooks": plugin.implemented()
            if isinstance(plugin, LazyPlugin)
            else sorted(impl.name for impl in pm.get_hookcallers(plugin) or []),
        }
        for name, plugin in pm.list_name_plugin()
        if plugin is not None  # a blocked name
    ]
    for name, error in pm.load_errors.items():
        result.append(
            {"name": name, "origin": "failed to load", "version": None, "hooks": [], "error": error}
        )
    return result


def _short_name(module_name: str) -> str:
    return module_name.rsplit(".", 1)[-1]


def _block(pm: pluggy.PluginManager, name: str, builtins: list[str]) -> None:
    """``-p no:NAME``: block ``name`` (an entry point's name, ``stepconf``, a
    ``[tool.stepkit] plugins`` entry, a built-in's module name) and every
    built-in whose module's last part it is (``python``), so that nothing can
    register under those names later.

    :raises PluginError: ``name`` is one of :data:`ESSENTIAL_PLUGINS`.
    """
    essential = [m for m in ESSENTIAL_PLUGINS if name in (m, _short_name(m))]
    if essential:
        raise PluginError(f"-p no:{name}: {essential[0]} is essential and cannot be disabled")
    pm.set_blocked(name)
    for module_name in builtins:
        if _short_name(module_name) == name:
            pm.set_blocked(module_name)


def _wanted(pm: pluggy.PluginManager, name: str, allow: set[str] | None) -> bool:
    """Whether a non-built-in plugin may load: not blocked, and named by the
    ``STEPKIT_LOAD_PLUGINS`` allow-list when there is one (a name it leaves
    out is blocked)."""
    if allow is not None and name not in allow:
        pm.set_blocked(name)
    return not pm.is_blocked(name)


def _allow_list() -> set[str] | None:
    raw = os.environ.get(ALLOW_LIST_ENV)
    if raw is None:
        return None
    return {item.strip() for item in raw.split(",") if item.strip()}


def _load_configured(project_dir: Path, spec: str) -> ModuleType:
    """A ``[tool.stepkit] plugins`` entry: a path to a ``.py`` file (relative to
    the project) or an importable module name."""
    if spec.endswith(".py"):
        return _load_from_path(project_dir / spec)
    try:
        return importlib.import_module(spec)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported by name
        raise PluginError(
            f"plugin {spec!r} (from [tool.stepkit] plugins) failed to import: {type(exc).__name__}: {exc}"
        ) from None


def _load_from_path(path: Path) -> ModuleType:
    """Load a plugin module from its file without touching ``sys.path``."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_stepkit_local_{path.stem}_{digest}", path)
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    # no __pycache__ in the project: stepkit writes nothing there (a --worktree run leaves it as it was)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported by name
        raise PluginError(f"plugin {path} failed to import: {type(exc).__name__}: {exc}") from None
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


class _Provided:
    """Which installed distribution provides a module, read once on first use
    (reading every distribution's file list takes tens of milliseconds)."""

    def __init__(self) -> None:
        self._by_package: Mapping[str, list[str]] | None = None

    def version(self, plugin: object) -> str | None:
        """The version of the one distribution providing ``plugin``'s top-level
        package; None for a plugin that is not a module, or no (or several) distributions."""
        if not isinstance(plugin, ModuleType):
            return None
        if self._by_package is None:
            self._by_package = importlib.metadata.packages_distributions()
        names = set(self._by_package.get(plugin.__name__.split(".", 1)[0], ()))
        return importlib.metadata.version(names.pop()) if len(names) == 1 else None
