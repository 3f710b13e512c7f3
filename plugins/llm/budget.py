"""The run budget, ``max_cost_usd`` and ``max_tokens`` (all four token
kinds), and the one rule by which every call that may spend it is let
start or refused: a model request of an engine
(:mod:`~stepkit.plugins.llm.anthropic_engine`,
:mod:`~stepkit.plugins.llm.openai_engine`, the CLI engines of
:mod:`~stepkit.plugins.llm.cli_engine`) and a coder or reviewer run as a
process (:mod:`stepkit.plugins.coders.command`, the presets).

What a call spends is known only once it has ended, so the budget is checked
before each call, against what the run has spent so far:

- a call is refused when the spending so far plus the call's estimate passes
  a limit (``spent + estimate > limit``); only the Messages API engine can
  estimate its request (its input), the others estimate nothing;
- a call that certainly spends (a model request, a coding CLI: every request
  it makes costs) is refused as well when nothing is left (``spent >=
  limit``);
- a call that may spend nothing (a ``command:`` coder or reviewer, which may
  call no model) runs on a budget used to the last token or cent and is
  refused only once the budget is passed.

So exactly at a limit, a model request and a coding CLI are refused and a
command runs; past it, every call is refused.  A CLI that takes a cap of its
own (Claude Code's ``--max-budget-usd``) is given :func:`cost_left`.

Every run has a budget: when the user sets neither limit, the run gets
:data:`DEFAULT_MAX_COST_USD` and :data:`DEFAULT_MAX_TOKENS` (a run is one
step), recorded in its settings (``budget_defaults``) so the start of the run
and a refusal can say so and name the setting that raises it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.llm.helpers import setting
from stepkit.records import StageFault, Usage

#: The budget of a run (one step) whose user set none: a realistic step on
#: the default model spends a few dollars and a few million tokens, most of
#: them cache reads of the coder's conversation.
DEFAULT_MAX_COST_USD = 10.0
DEFAULT_MAX_TOKENS = 10_000_000
LIMITS = ("max_cost_usd", "max_tokens")


@hookimpl
def stepkit_configure(config: Any, settings: dict[str, Any]) -> None:
    """Give a run with no budget the default one."""
    if any(settings.get(name) not in (None, "") for name in LIMITS):
        return
    settings["max_cost_usd"], settings["max_tokens"] = DEFAULT_MAX_COST_USD, DEFAULT_MAX_TOKENS
    settings["budget_defaults"] = list(LIMITS)


def describe(settings: Mapping[str, Any]) -> str | None:
    """The run's budget in one line, with how to raise it; None: no budget."""
    max_cost = setting(settings, "max_cost_usd", float, None)
    max_tokens = setting(settings, "max_tokens", int, None)
    parts = ([f"${max_cost:g}"] if max_cost is not None else []) + (
        [f"{max_tokens:,} tokens"] if max_tokens is not None else []
    )
    if not parts:
        return None
    default = " (the default)" if settings.get("budget_defaults") else ""
    return (
        f"Model budget for this step: {' and '.join(parts)}{default}; raise it with "
        "--set max_cost_usd=… or --set max_tokens=…"
    )


def check(
    settings: Mapping[str, Any],
    spent: Usage,
    *,
    refused: str,
    estimate: Usage | None = None,
    certain: bool = True,
    note: Callable[[str], str] = str,
) -> None:
    """Refuse the call by the module's rule.

    :param settings: the run settings (``max_cost_usd``, ``max_tokens``).
    :param spent: what the run has spent so far.
    :param refused: what happens instead, said at the end of the fault
        (``the request was not sent``, ``coder was not started``).
    :param estimate: what the call is expected to cost at least.
    :param certain: the call certainly spends (False: it may call no model).
    :param note: how the fault is worded (an engine's fault note).
    :raises StageFault: the budget does not allow the call.
    """
    reason = _refusal(settings, spent, estimate or Usage(), certain)
    if reason is not None:
        raise StageFault(note(f"budget exceeded: {reason}; {refused}"))


def cost_left(settings: Mapping[str, Any], spent: Usage) -> float | None:
    """Dollars left of ``max_cost_usd`` (never below 0); None: no cost budget."""
    max_cost = setting(settings, "max_cost_usd", float, None)
    return None if max_cost is None else max(0.0, max_cost - spent.cost_usd)


def _refusal(
    settings: Mapping[str, Any], spent: Usage, estimate: Usage, certain: bool
) -> str | None:
    max_cost = setting(settings, "max_cost_usd", float, None)
    max_tokens = setting(settings, "max_tokens", int, None)
    if max_cost is not None and _over(spent.cost_usd, estimate.cost_usd, max_cost, certain):
        return (
            f"the run has spent ${spent.cost_usd:.4f} of max_cost_usd={max_cost:g}"
            + _next(
                spent.cost_usd,
                max_cost,
                estimate,
                f"~{estimate.total_tokens} input tokens, ~${estimate.cost_usd:.4f}",
            )
            + _raise(settings, "max_cost_usd")
        )
    if max_tokens is not None and _over(
        spent.total_tokens, estimate.total_tokens, max_tokens, certain
    ):
        return (
            f"the run has used {spent.total_tokens} tokens of max_tokens={max_tokens}"
            + _next(
                spent.total_tokens, max_tokens, estimate, f"~{estimate.total_tokens} input tokens"
            )
            + _raise(settings, "max_tokens")
        )
    return None


def _raise(settings: Mapping[str, Any], name: str) -> str:
    default = "the default budget; " if name in (settings.get("budget_defaults") or ()) else ""
    return f" ({default}raise it with --set {name}=…)"


def _over(spent: float, estimate: float, limit: float, certain: bool) -> bool:
    return spent + estimate > limit or (certain and spent >= limit)


def _next(spent: float, limit: float, estimate: Usage, size: str) -> str:
    """What the estimate adds to the reason, when it is what passes the limit."""
    return (
        f" and the next request ({size}) would pass it"
        if spent < limit and estimate != Usage()
        else ""
    )
