"""The formats of the tokens services issue, one row per issuer: what
:mod:`stepkit.workspace.redact` masks wherever it appears.

Each row is whole: the token's shape and the literal the one-pass
prefilter looks for, so a format is added, changed or dropped in one place.
The formats come from detect-secrets' and gitleaks' rule sets.

A leaf module (it imports nothing of stepkit): masking never waits on
plugins being loaded, so the formats are not a plugin's to declare.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenFormat:
    """One issuer's token format.

    :ivar issuer: who issues it (documentation and test ids only).
    :ivar literal: an RE2 regex every token of the format contains where it
        starts (the prefilter's: a superset of the shape).
    :ivar shape: the token, a Python regex; a ``value`` group, when there is
        one, is what is masked (``Bearer …`` keeps its word).
    :ivar starts_with: the shape starts one character into the token, which
        must be one of these letters at a word start (Stripe's ``sk_``/``rk_``
        would otherwise share ``k_`` with every ``sk-`` key's search).
    """

    issuer: str
    literal: str
    shape: str
    starts_with: str = ""


def _word_start(literal: str) -> str:
    """No letter or digit right before ``literal``, which the shape has just
    matched (a word boundary that also holds before ``-`` and ``_``)."""
    return f"(?<![A-Za-z0-9]{literal})"


TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    TokenFormat(
        "Anthropic and OpenAI",
        r"sk-",
        r"sk-" + _word_start("sk-") + r"(?:ant-[A-Za-z0-9_\-]{8,512}|[A-Za-z0-9_\-]{16,512})",
    ),
    TokenFormat(
        "GitHub and GitLab",
        r"gh[pousr]_|github_pat_|glpat-",
        r"g" + _word_start("g") + r"(?:h[pousr]_[A-Za-z0-9]{20,255}"
        r"|ithub_pat_[A-Za-z0-9_]{20,255}|lpat-[A-Za-z0-9_\-]{20,255})",
    ),
    TokenFormat(
        "AWS access key ids and Google API keys",
        r"A[KS]IA|AIza",
        r"A" + _word_start("A") + r"(?:[KS]IA[0-9A-Z]{16}\b|Iza[0-9A-Za-z_\-]{35}\b)",
    ),
    TokenFormat("Slack", r"xox[abprs]-", r"xox[abprs]-[A-Za-z0-9\-]{10,255}"),
    TokenFormat("Stripe", r"k_(?:live|test)_", r"k_(?:live|test)_[0-9A-Za-z]{16,255}", "sr"),
    TokenFormat("npm", r"npm_", r"npm_" + _word_start("npm_") + r"[A-Za-z0-9]{36}\b"),
    TokenFormat("PyPI", r"pypi-AgE", r"pypi-AgE[A-Za-z0-9_\-]{50,512}"),
    TokenFormat("SendGrid", r"SG\.", r"SG\.[\w\-]{22}\.[\w\-]{43}\b"),
    TokenFormat("Hugging Face", r"hf_", r"hf_" + _word_start("hf_") + r"[A-Za-z0-9]{34}\b"),
    TokenFormat("JWT", r"eyJ", r"eyJ[\w\-]{8,2048}\.eyJ[\w\-]{8,2048}\.[\w\-]{8,2048}"),
    # Bearer: a value with letters and digits ("Bearer tokens are..." stays)
    TokenFormat(
        "HTTP bearer credentials",
        r"[Bb]earer[ \t]",
        r"earer(?<=[Bb]earer)"
        + _word_start("[Bb]earer")
        + r"[ \t]+(?P<value>(?=[\w+/.=\-~]{0,2047}\d)(?=[\w+/.=\-~]{0,2047}[A-Za-z])"
        r"[\w+/.=\-~]{8,2048})",
    ),
)
