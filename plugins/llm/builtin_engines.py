"""The built-in engine kinds (``--engine KIND[:ARG]``), registered through
``stepkit_make_engine`` like any third-party engine.  Each engine module is
imported only when its kind is asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl

KINDS = {
    "anthropic[:MODEL]": "the Anthropic Messages API (ANTHROPIC_API_KEY; the default)",
    "scripted:FILE": "offline answers per node id from a YAML file (demos, tests of graphs and plugins)",
    "claude[:MODEL]": "Claude Code headless (claude -p): a Claude subscription, no API key",
    "codex[:MODEL]": "Codex headless (codex exec): a ChatGPT plan or Codex's configured provider",
    "openai:MODEL": "any OpenAI-compatible chat-completions server (OPENAI_BASE_URL or [engines.openai])",
}


@hookimpl
def stepkit_engine_kinds() -> dict[str, str]:
    """The built-in kinds and what each one runs on."""
    return KINDS


@hookimpl(trylast=True)
def stepkit_make_engine(kind: str, arg: str, project_dir: Path) -> Any | None:
    """The built-in engine of ``kind``; None for a kind that is not built in."""
    if kind == "anthropic":
        from stepkit.plugins.llm.anthropic_engine import AnthropicEngine

        return AnthropicEngine(model=arg or None)
    if kind == "claude":
        from stepkit.plugins.llm.claude_engine import ClaudeCodeEngine

        return ClaudeCodeEngine(model=arg or None)
    if kind == "codex":
        from stepkit.plugins.llm.codex_engine import CodexEngine

        return CodexEngine(model=arg or None)
    if kind == "openai":
        from stepkit.plugins.llm.openai_engine import OpenAIEngine

        return OpenAIEngine(model=arg or None, project_dir=project_dir)
    if kind == "scripted":
        from stepkit.plugins.llm.scripted import ScriptedEngine

        if not arg:
            raise UsageError("--engine scripted:FILE needs a file name")
        return ScriptedEngine.load(arg, project_dir)
    return None
