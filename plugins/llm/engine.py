"""The LLM engine interface the stages call, and the factory that picks one.

A stage asks the run's engine for one structured answer::

    answer = ask(ctx, system=SYSTEM, prefix=plan_block, prompt=task,
                 schema=OrientResult, tools=read_only_tools(ctx.project_dir))

Engines (``--engine KIND[:ARG]``) are plugins: the ``stepkit_make_engine``
hook builds one from the spec (firstresult, so a project's engine beats a
built-in of the same kind) and ``stepkit_engine_kinds`` names them.  The
built-in kinds (:mod:`stepkit.plugins.llm.builtin_engines`):

- ``anthropic`` or ``anthropic:MODEL`` (the default): the Anthropic Messages
  API through the official SDK (:mod:`stepkit.plugins.llm.anthropic_engine`).
- ``scripted:FILE``: offline answers per node id from a YAML file
  (:mod:`stepkit.plugins.llm.scripted`), for the demo and for tests of custom
  graphs and plugins.

Every engine failure (HTTP error after retries, invalid output twice, budget
exceeded, tool loop too long) is raised as :class:`~stepkit.records.StageFault`
whose ``note`` is one paragraph without a traceback or a secret.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl
from stepkit.records import StageContext

if TYPE_CHECKING:
    from stepkit.plugins.llm.tools import Tool

DEFAULT_ENGINE = "anthropic"
BUILTIN_ENGINES = "stepkit.plugins.llm.builtin_engines"
M = TypeVar("M", bound=BaseModel)


class Engine(Protocol):
    """Something that turns a prompt into a validated pydantic answer.

    An engine that can hold a conversation over several calls also has
    ``new_thread()`` (a :class:`~stepkit.plugins.llm.helpers.Thread`) and
    takes ``thread=`` in :meth:`structured`: the built-in coder's rounds of
    a step are then one conversation (every built-in engine but the
    scripted one)."""

    def structured(
        self,
        *,
        node: str,
        system: str,
        prompt: str,
        schema: type[M],
        tools: list[Tool] | None,
        ctx: StageContext,
        max_turns: int = 20,
        prefix: str | None = None,
    ) -> M:
        """Ask the model and return its answer validated by ``schema``.

        :param node: the graph node asking (selects the model and the scripted
            answer; named in events and fault notes).
        :param system: the node's instructions (stable: cached).
        :param prompt: the task for this call (changes from call to call).
        :param schema: the pydantic model the answer must validate against.
        :param tools: model-facing tools the model may call (None = none).
        :param ctx: the stage context: settings (model, budgets, retries),
            usage (updated in place) and ``emit`` (one ``llm_call`` event per
            API call).
        :param max_turns: bound on model round trips in the tool loop.
        :param prefix: stable material sent before ``prompt`` (the step plan,
            the previous handoff); marked for prompt caching.
        :raises StageFault: the engine could not produce a valid answer.
        """
        ...


def ask(
    ctx: StageContext,
    *,
    system: str,
    prefix: str,
    prompt: str,
    schema: type[M],
    tools: list[Tool] | None,
) -> dict[str, Any]:
    """One structured answer from the run's engine for ``ctx.node``, as a dict
    (what a stage hook returns)."""
    engine = make_engine(None, ctx)
    answer = engine.structured(
        node=ctx.node,
        system=system,
        prefix=prefix,
        prompt=prompt,
        schema=schema,
        tools=tools,
        ctx=ctx,
    )
    return answer.model_dump()


def make_engine(spec: str | None, ctx: StageContext) -> Engine:
    """The engine named by ``spec``, built once per run (:class:`RunEngines`;
    outside a run, once per context: ``ctx.engines``).

    ``spec`` falls back to ``ctx.settings["engine"]`` (``--engine``, else the
    project's ``engine`` setting, folded in when the run starts), then
    ``anthropic``.

    :raises UsageError: unknown engine kind, or a scripted file that is
        missing or malformed (a configuration error, one line).
    """
    spec = spec or ctx.settings.get("engine")
    if ctx.run_dir is None or ctx.pm is None:
        if spec not in ctx.engines:
            ctx.engines[spec] = build_engine(spec, Path(ctx.project_dir), ctx.pm)
        return ctx.engines[spec]
    return RunEngines.of(ctx.pm).get(
        Path(ctx.run_dir), spec, lambda: build_engine(spec, Path(ctx.project_dir), ctx.pm)
    )


class RunEngines:
    """The engines of the runs one plugin manager serves, by run and spec.

    Every node of a run asks the same engine, so the run has one SDK client
    (one connection pool) and reads a scripted file once; runs never share
    one, whether they share the plugin manager or not.  It is registered on
    the run's plugin manager at the first engine a run asks for, and lets a
    run's engines go when that run finishes or pauses (``stepkit_run_finished``).
    Nodes run in worker threads, so every access holds the lock.
    """

    NAME = "stepkit.plugins.llm.run-engines"
    _registering = (
        threading.Lock()
    )  # one holder per plugin manager, even when two threads ask at once

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engines: dict[tuple[Path, str | None], Engine] = {}

    @classmethod
    def of(cls, pm: Any) -> RunEngines:
        """The holder registered on ``pm`` (registered now if it has none)."""
        with cls._registering:
            holder = pm.get_plugin(cls.NAME)
            if holder is None:
                holder = cls()
                pm.register(holder, name=cls.NAME)
            return holder

    def get(self, run_dir: Path, spec: str | None, build: Callable[[], Engine]) -> Engine:
        """The run's engine for ``spec``, built by ``build`` the first time."""
        with self._lock:
            engine = self._engines.get((run_dir, spec))
            if engine is None:
                engine = self._engines[(run_dir, spec)] = build()
            return engine

    @hookimpl
    def stepkit_run_finished(self, run_id: str) -> None:
        """Let the finished (or paused) run's engines go."""
        with self._lock:
            for key in [key for key in self._engines if key[0].name == run_id]:
                del self._engines[key]


def check_engine_spec(spec: str | None, project_dir: Path, *, pm: Any, calls: bool = False) -> None:
    """Build the engine once before a run starts, so a bad ``--engine`` (an
    unknown kind, a missing or malformed scripted file) is a usage error
    (exit 2, no run) instead of a fault in the first LLM node.

    :param pm: the command's own plugin manager (``stepkit_configure``'s
        ``pm``), whose engines count: a manager built here would load every
        installed entry point, which a resume must not (it loads only those
        its run began with).
    :param calls: the run will call it: an engine that says it cannot be
        called (``setup_problem()``: no credentials) is a usage error too.
    """
    engine = build_engine(spec, project_dir, pm)
    problem = getattr(engine, "setup_problem", None) if calls else None
    if problem is not None and (reason := problem()):
        raise UsageError(reason)


def build_engine(spec: str | None, project_dir: Path, pm: Any = None) -> Engine:
    """A new engine for ``spec`` (default :data:`DEFAULT_ENGINE`), built by
    the first plugin of ``pm`` that answers ``stepkit_make_engine``.

    Without ``pm`` the built-ins and entry points are asked, then, only for a
    kind none of them builds, the project's own plugins (``stepconf.py``,
    ``[tool.stepkit] plugins``).  A ``pm`` built without the built-in
    engines (a host's or a test's own list; not ``-p no:``) still has them.

    :raises UsageError: no plugin builds that kind, or the one that does
        finds the spec unusable.
    """
    kind, _, arg = (spec or DEFAULT_ENGINE).partition(":")
    kinds: dict[str, str] = {}
    for manager in _managers(pm, project_dir):
        engine = manager.hook.stepkit_make_engine(kind=kind, arg=arg, project_dir=project_dir)
        if engine is not None:
            return engine
        kinds = engine_kinds(manager)
    raise UsageError(f"unknown engine {spec!r}: use {' or '.join(kinds) or 'a kind a plugin adds'}")


def engine_kinds(pm: Any) -> dict[str, str]:
    """Every engine kind the plugins of ``pm`` name: usage → description."""
    kinds: dict[str, str] = {}
    for answer in reversed(pm.hook.stepkit_engine_kinds()):  # built-ins first
        kinds.update(answer or {})
    return kinds


def _managers(pm: Any, project_dir: Path) -> Iterator[Any]:
    """The plugin managers to ask for an engine, in order (see :func:`build_engine`)."""
    from stepkit.pluginmanager import StepkitPluginManager, get_plugin_manager

    if pm is None:
        from stepkit.config import load_config

        yield get_plugin_manager()
        yield get_plugin_manager(project_dir, load_config(project_dir))
        return
    yield pm
    if not pm.has_plugin(BUILTIN_ENGINES) and not pm.is_blocked(BUILTIN_ENGINES):
        builtins = StepkitPluginManager()
        builtins.register(importlib.import_module(BUILTIN_ENGINES), BUILTIN_ENGINES, "builtin")
        yield builtins
