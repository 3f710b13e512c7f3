"""The LLM engine interface the stages call, and the factory that picks one.

A stage asks the run's engine for one structured answer::

    answer = ask(ctx, system=SYSTEM, prefix=plan_block, prompt=task,
                 schema=OrientResult, tools=read_only_tools(ctx.project_dir))

Engines (``--engine SPEC``):

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

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl
from stepkit.records import StageContext

if TYPE_CHECKING:
    from stepkit.plugins.llm.tools import Tool

DEFAULT_ENGINE = "anthropic"
M = TypeVar("M", bound=BaseModel)


class Engine(Protocol):
    """Something that turns a prompt into a validated pydantic answer."""

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


def ask(ctx: StageContext, *, system: str, prefix: str, prompt: str, schema: type[M],
        tools: list[Tool] | None) -> dict[str, Any]:
    """One structured answer from the run's engine for ``ctx.node``, as a dict
    (what a stage hook returns)."""
    engine = make_engine(None, ctx)
    answer = engine.structured(node=ctx.node, system=system, prefix=prefix, prompt=prompt,
                               schema=schema, tools=tools, ctx=ctx)
    return answer.model_dump()


def make_engine(spec: str | None, ctx: StageContext) -> Engine:
    """The engine named by ``spec``, built once per run (:class:`RunEngines`;
    outside a run, a new one at each call).

    ``spec`` falls back to ``ctx.settings["engine"]`` (``--engine``, else the
    project's ``engine`` setting, folded in when the run starts), then
    ``anthropic``.

    :raises UsageError: unknown engine kind, or a scripted file that is
        missing or malformed (a configuration error, one line).
    """
    spec = spec or ctx.settings.get("engine")
    if ctx.run_dir is None or ctx.pm is None:
        return _build(spec, Path(ctx.project_dir))
    return RunEngines.of(ctx.pm).get(Path(ctx.run_dir), spec, lambda: _build(spec, Path(ctx.project_dir)))


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
    _registering = threading.Lock()  # one holder per plugin manager, even when two threads ask at once

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


def check_engine_spec(spec: str | None, project_dir: Path, *, calls: bool = False) -> None:
    """Build the engine once before a run starts, so a bad ``--engine`` (an
    unknown kind, a missing or malformed scripted file) is a usage error
    (exit 2, no run) instead of a fault in the first LLM node.

    :param calls: the run will call it: an engine that says it cannot be
        called (``setup_problem()``: no credentials) is a usage error too.
    """
    engine = _build(spec, project_dir)
    problem = getattr(engine, "setup_problem", None) if calls else None
    if problem is not None and (reason := problem()):
        raise UsageError(reason)


def _build(spec: str | None, project_dir: Path) -> Engine:
    kind, _, arg = (spec or DEFAULT_ENGINE).partition(":")
    if kind == "anthropic":
        from stepkit.plugins.llm.anthropic_engine import AnthropicEngine

        return AnthropicEngine(model=arg or None)
    if kind == "scripted":
        from stepkit.plugins.llm.scripted import ScriptedEngine

        if not arg:
            raise UsageError("--engine scripted:FILE needs a file name")
        return ScriptedEngine.load(arg, project_dir)
    raise UsageError(f"unknown engine {spec!r}: use anthropic[:MODEL] or scripted:FILE")
