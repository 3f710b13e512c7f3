"""Mask secrets in text before it is shown to a model or written to disk.

What is masked (replaced by ``[REDACTED]``):

- the values of secret-named environment variables: ``ANTHROPIC_API_KEY``
  and any variable whose name ends in ``_KEY``, ``_TOKEN``, ``_SECRET``,
  ``_PASSWORD`` (values of 8+ characters);
- well-known token formats: ``sk-ant-…``, ``sk-…``, GitHub (``ghp_…``,
  ``github_pat_…``), AWS access key ids (``AKIA…``), Slack (``xox?-…``),
  GitLab (``glpat-…``), ``Bearer …`` headers, PEM private key blocks;
- the value in an assignment whose name mentions key, token, secret,
  password or credential (``API_KEY=…``, ``"token": "…"``) when the value
  is 8+ token characters with letters and digits (hex, base64, random strings),
  so ordinary code such as ``token = next_token()`` stays readable.

It is applied to every gate log line, event and tool result, so it is one
pre-compiled regex pass per call.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

MASK = "[REDACTED]"

_SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")

_TOKEN_FORMATS = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"\bsk-[A-Za-z0-9_\-]{16,}",
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
)
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL)

# a line containing none of these (lower-cased) cannot match any pattern above
_TRIGGERS = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "akia", "asia",
    "xox", "bearer", "key", "token", "secret", "passw", "pwd", "credential",
)

# the "name" group (name and separator) is kept; the value after it is masked
_ASSIGNMENT = (
    r"(?P<name>(?i:bearer\s+"
    r"|(?<![\w.\-])[\w.\-]*(?:key|token|secret|passw(?:or)?d|pwd|credential)s?[\"']?\s*[:=]\s*[\"']?))"
    r"(?=[A-Za-z0-9+/_.=\-~]*\d)(?=[A-Za-z0-9+/_.=\-~]*[A-Za-z])"
    r"[A-Za-z0-9+/_.=\-~]{8,}(?![\w(\[])"
)


def redact(text: str) -> str:
    """Return ``text`` with API keys and token-like strings masked."""
    if not text:
        return text
    env_values = secret_env_values()
    pattern = _pattern(env_values)
    if "PRIVATE KEY-----" in text:
        text = _PEM.sub(MASK, text)
    if len(text) <= 4096:
        return _redact_piece(text, pattern, env_values)
    # Big texts (gate logs): find the lines holding a trigger word with
    # str.find over the lower-cased text (C speed, no per-line Python loop);
    # only those lines go through the pattern.
    lower = text.lower()
    starts: set[int] = set()
    for needle in (*_TRIGGERS, *(v.lower() for v in env_values)):
        at = lower.find(needle)
        while at != -1:
            line_start = lower.rfind("\n", 0, at) + 1
            starts.add(line_start)
            next_line = lower.find("\n", at)
            at = -1 if next_line == -1 else lower.find(needle, next_line)
    parts, pos = [], 0
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end + 1
        parts.append(text[pos:start])
        parts.append(pattern.sub(_mask, text[start:end]))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _redact_piece(piece: str, pattern: re.Pattern[str], env_values: tuple[str, ...]) -> str:
    lower = piece.lower()
    if not any(t in lower for t in _TRIGGERS) and not any(v in piece for v in env_values):
        return piece
    return pattern.sub(_mask, piece)


def _mask(match: re.Match[str]) -> str:
    prefix = match.group("name")
    return (prefix or "") + MASK


def secret_env_values() -> tuple[str, ...]:
    # rescanned on every call (~20 us): a cache keyed on anything cheaper than
    # the values themselves misses a secret that replaced another one
    values = {
        value
        for name, value in os.environ.items()
        if (name == "ANTHROPIC_API_KEY" or name.upper().endswith(_SECRET_ENV_SUFFIXES))
        and len(value) >= 8
    }
    # longest first so a value that contains another is masked whole
    return tuple(sorted(values, key=len, reverse=True))


@lru_cache(maxsize=8)
def _pattern(env_values: tuple[str, ...]) -> re.Pattern[str]:
    parts = [re.escape(v) for v in env_values] + list(_TOKEN_FORMATS) + [_ASSIGNMENT]
    return re.compile("|".join(f"(?:{p})" for p in parts))
