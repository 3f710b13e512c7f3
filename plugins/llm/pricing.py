"""Estimated cost of a model call, from a small price table per model family.

Prices are USD per million tokens (input, output, 5-minute cache write,
cache read) as published on Anthropic's pricing page
(platform.claude.com/docs/en/about-claude/pricing, "Model pricing"; a
one-hour cache write is 2x the input price, and Haiku 5.5's rates for
prompts over 100,000 tokens are not modelled); they are estimates
for budgets and reports, not an invoice.  A model not in the table is
priced like the current Sonnet so that a budget still applies.
"""

from __future__ import annotations

from typing import NamedTuple

from stepkit.records import Usage


class Price(NamedTuple):
    input: float
    output: float
    cache_write: float
    cache_read: float


# first matching prefix wins, so specific versions come before their family
_PRICES: tuple[tuple[str, Price], ...] = (
    ("claude-fable-5-", Price(10.0, 50.0, 12.5, 0.25)),
    ("claude-mythos-5-", Price(10.0, 50.0, 12.5, 0.25)),
    ("claude-fable", Price(10.0, 50.0, 12.5, 1.0)),
    ("claude-mythos", Price(10.0, 50.0, 12.5, 1.0)),
    ("claude-opus-5-5", Price(4.0, 20.0, 5.0, 0.2)),
    ("claude-opus-4-0", Price(15.0, 75.0, 18.75, 1.5)),
    ("claude-opus-4-1", Price(15.0, 75.0, 18.75, 1.5)),
    ("claude-opus-4-2025", Price(15.0, 75.0, 18.75, 1.5)),
    ("claude-opus", Price(5.0, 25.0, 6.25, 0.5)),
    ("claude-sonnet-5-5", Price(2.0, 10.0, 2.5, 0.1)),
    ("claude-sonnet-5", Price(2.0, 10.0, 2.5, 0.2)),
    ("claude-sonnet", Price(3.0, 15.0, 3.75, 0.3)),
    ("claude-haiku-5-5", Price(0.1, 0.5, 0.125, 0.01)),
    ("claude-haiku", Price(1.0, 5.0, 1.25, 0.1)),
)
_FALLBACK = Price(3.0, 15.0, 3.75, 0.3)


def price_for(model: str) -> Price:
    """The price row for ``model`` (prefix match; the fallback otherwise)."""
    for prefix, price in _PRICES:
        if model.startswith(prefix):
            return price
    return _FALLBACK


def estimate_cost(model: str, usage: Usage) -> float:
    """Estimated USD cost of ``usage`` (its token counts; its cost is ignored)."""
    price = price_for(model)
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
    )
    return round(total / 1_000_000, 6)


#: The minimum cacheable prefix per model family, in tokens (Anthropic's
#: prompt-caching documentation, platform.claude.com/docs/en/build-with-claude/
#: prompt-caching, "Cache limitations": 512 for Fable 5.1, Mythos 5.1, Opus 5.5,
#: Opus 5, Sonnet 5.5, Fable 5, Mythos 5 and Haiku 5.5; first matching prefix
#: wins).  A shorter prefix marked with cache_control is not cached and costs a
#: breakpoint.
_MIN_CACHEABLE: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-5-5", 512),
    ("claude-haiku-5-5", 512),
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-7", 2048),
    ("claude-sonnet-4-6", 2048),
    ("claude-haiku-4-5", 4096),
    ("claude-haiku-3", 2048),
    ("claude-opus-5", 512),
    ("claude-fable-5", 512),
    ("claude-mythos-5", 512),
    ("claude-haiku", 4096),
)
_MIN_CACHEABLE_FALLBACK = 1024  # Sonnet 5 / 4.x, Opus 4.8, 4.1, 4


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix, in tokens, that the API caches for ``model``."""
    for prefix, tokens in _MIN_CACHEABLE:
        if model.startswith(prefix):
            return tokens
    return _MIN_CACHEABLE_FALLBACK


#: Context window per model family, in tokens (first matching prefix wins).
_CONTEXT_WINDOW: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-5", 1_000_000),
    ("claude-opus-5", 1_000_000),
)
_CONTEXT_WINDOW_FALLBACK = 200_000
#: The share of the window a conversation's history may fill before old
#: tool results are trimmed (room for the system, tools, output, thinking).
CONTEXT_BUDGET_SHARE = 0.5
#: The ceiling of that budget, whatever the window: a long history costs on
#: every turn even when cached, and old tool output is rarely still needed.
CONTEXT_BUDGET_MAX = 150_000


def context_budget_tokens(model: str) -> int:
    """How many tokens of history a conversation with ``model`` may hold."""
    window = next(
        (tokens for prefix, tokens in _CONTEXT_WINDOW if model.startswith(prefix)),
        _CONTEXT_WINDOW_FALLBACK,
    )
    return min(int(window * CONTEXT_BUDGET_SHARE), CONTEXT_BUDGET_MAX)


#: Model families that take ``output_config.effort`` with adaptive thinking.
_EFFORT_MODELS = (
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-sonnet-4-6",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-fable-5",
    "claude-mythos-5",
)


def supports_effort(model: str) -> bool:
    """Does ``model`` take an effort level (and adaptive thinking)?"""
    return model.startswith(_EFFORT_MODELS)
