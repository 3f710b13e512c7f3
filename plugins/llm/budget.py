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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stepkit.plugins.llm.helpers import setting
from stepkit.records import StageFault, Usage


def check(settings: Mapping[str, Any], spent: Usage, *, refused: str, estimate: Usage | None = None,
          certain: bool = True, note: Callable[[str], str] = str) -> None:
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


def _refusal(settings: Mapping[str, Any], spent: Usage, estimate: Usage, certain: bool) -> str | None:
    max_cost = setting(settings, "max_cost_usd", float, None)
    max_tokens = setting(settings, "max_tokens", int, None)
    if max_cost is not None and _over(spent.cost_usd, estimate.cost_usd, max_cost, certain):
        return (f"the run has spent ${spent.cost_usd:.4f} of max_cost_usd={max_cost:g}"
                + _next(spent.cost_usd, max_cost, estimate,
                        f"~{estimate.total_tokens} input tokens, ~${estimate.cost_usd:.4f}"))
    if max_tokens is not None and _over(spent.total_tokens, estimate.total_tokens, max_tokens, certain):
        return (f"the run has used {spent.total_tokens} tokens of max_tokens={max_tokens}"
                + _next(spent.total_tokens, max_tokens, estimate, f"~{estimate.total_tokens} input tokens"))
    return None


def _over(spent: float, estimate: float, limit: float, certain: bool) -> bool:
    return spent + estimate > limit or (certain and spent >= limit)


def _next(spent: float, limit: float, estimate: Usage, size: str) -> str:
    """What the estimate adds to the reason, when it is what passes the limit."""
    return f" and the next request ({size}) would pass it" if spent < limit and estimate != Usage() else ""
