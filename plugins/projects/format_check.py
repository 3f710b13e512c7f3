"""The check mode of the formatters the project plugins choose, for
``stepkit verify``: the same tool, told to change nothing and to exit
non-zero, naming the files, when a file would change.

A command is rewritten part by part (``a && b``); a part that already
checks (``prettier --check``, ``biome format`` without ``--write``) stays as
it is.  One part with no known check mode (``make fmt``) means the whole
command has none, and the gate is NOT RUN in verify (``--fix`` runs it as a
run does); a project's own script that checks is found so by the gate
planner, which asks this hook about the script's body
(:func:`stepkit.workspace.gate_commands.check_mode`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from stepkit import quoting
from stepkit.config import Config
from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile

#: ``gofmt -l`` lists the files that would change but exits 0: fail when it lists any.
_GOFMT_CHECK = (
    'sh -c \'files=$(gofmt -l "$@") || exit 2; [ -z "$files" ] || '
    '{ echo "would reformat:"; echo "$files"; exit 1; }\' gofmt'
)

#: A pre-commit or prek hook has no dry run: it runs as it is, its rewrites undone and named
#: (:mod:`stepkit.plugins.projects.fix_diff`).
_FIX_DIFF = quoting.shell([sys.executable, "-m", "stepkit.plugins.projects.fix_diff", "--"])

#: (the formatter's fix mode, its check mode): the first pattern that matches a part rewrites it.
_CHECK_MODES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (lazy_compile(pattern), replacement)
    for pattern, replacement in (
        (
            r"^.*(?<![\w-])(?:pre-commit|pre_commit|prek)\s+run\s.*--files\s.*$",
            _FIX_DIFF.replace("\\", "\\\\") + r" \g<0>",
        ),
        (r"\bruff format\b", "ruff format --check"),
        (r"(?<![\w-])black\b", "black --check"),
        (r"\bprettier\b(.*?)[ \t](?:--write|-w)\b", r"prettier\1 --check"),
        (r"\bbiome (format|check|lint)\b(.*?)[ \t]--(?:write|fix|apply)\b", r"biome \1\2"),
        (r"\bcargo fmt\b", "cargo fmt --check"),
        (r"(?<![\w-])rustfmt\b", "rustfmt --check"),
        (r"\bgofmt -l -w\b", _GOFMT_CHECK),
        (r"\bclang-format -i\b", "clang-format --dry-run --Werror"),
        (r"\bdeno fmt\b", "deno fmt --check"),
        (r"\bmix format\b", "mix format --check-formatted"),
        (r"\bdotnet format\b", "dotnet format --verify-no-changes"),
        (r"\bspotless:apply\b", "spotless:check"),
        (r"\bspotlessApply\b", "spotlessCheck"),
        (r"\bphp-cs-fixer fix\b", "php-cs-fixer fix --dry-run --diff"),
        (r"\bswift format --in-place\b", "swift format lint --strict"),
        (r"\bzig fmt\b", "zig fmt --check"),
    )
)
#: A formatter run in its check mode already (nothing to rewrite): the part is its own check.
_CHECKING: tuple[re.Pattern[str], ...] = tuple(
    lazy_compile(pattern)
    for pattern in (
        r"\bruff format\b.*\s--check\b",
        r"(?<![\w-])black\b.*\s--check\b",
        r"\bprettier\b(?!.*\s(?:--write|-w)\b).*\s(?:--check|-c|--list-different|-l)\b",
        r"\bbiome (?:format|check|lint)\b(?!.*\s--(?:write|fix|apply|apply-unsafe)\b)",
        r"\bbiome ci\b",
        r"\bcargo fmt\b.*\s--check\b",
        r"(?<![\w-])rustfmt\b.*\s--check\b",
        r"\bclang-format\b.*\s--dry-run\b.*\s--Werror\b",
        r"\b(?:deno|zig) fmt\b.*\s--check\b",
        r"\bmix format\b.*\s--check-formatted\b",
        r"\bdotnet format\b.*\s--verify-no-changes\b",
        r"\bspotless:check\b|\bspotlessCheck\b",
        r"\bphp-cs-fixer fix\b.*\s--dry-run\b",
        r"\bswift format lint\b",
    )
)
_PARTS = lazy_compile(r"(\s*(?:&&|;)\s*)")


@hookimpl(trylast=True)
def stepkit_format_check_command(command: str, project_dir: Path, config: Config) -> str | None:
    """The check mode of each part of ``command``, or "" when a part has none."""
    pieces = _PARTS.split(command)
    for at in range(0, len(pieces), 2):
        checked = _check_mode(pieces[at])
        if checked is None:
            return ""
        pieces[at] = checked
    return "".join(pieces)


def _check_mode(part: str) -> str | None:
    if any(pattern.search(part) for pattern in _CHECKING):
        return part
    for pattern, replacement in _CHECK_MODES:
        checked, count = pattern.subn(replacement, part, count=1)
        if count:
            return checked
    return None
