"""The four real coding CLIs against loopback model APIs.

:func:`install` puts a CLI at the version its preset was checked against
into a cache dir (``STEPKIT_REALCLI_CACHE``, default
``~/.cache/stepkit-realcli``): claude, codex and opencode with npm, aider with
pip into its own venv.  :class:`Model` starts the API the CLI speaks
(Anthropic Messages with streaming for claude, aider and opencode; OpenAI
Responses with streaming for codex), gives the CLI's environment (its home,
config and credentials in a temp dir, never the developer's) and scripts
the model's turns in the CLI's own tool vocabulary: :meth:`Model.write`,
:meth:`Model.shell`, :meth:`Model.say`, :meth:`Model.fail`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Self

from stepkit.plugins.coders.presets import PRESETS
from stepkit.plugins.coders.reviewer import text_findings
from stepkit.plugins.stages.answers import ReviewFinding
from stepkit.records import report_of
from tests.support.messages_api import MessagesAPI, Scripted
from tests.support.openai_api import ResponsesAPI

#: name -> (installer, package)
PACKAGES = {
    "claude": ("npm", "@anthropic-ai/claude-code"),
    "codex": ("npm", "@openai/codex"),
    "aider": ("pip", "aider-chat"),
    "opencode": ("npm", "opencode-ai"),
}
ANTHROPIC_MODEL = "claude-sonnet-4-5"
USAGE = {
    "input_tokens": 1200,
    "output_tokens": 30,
    "cache_read_input_tokens": 500,
    "cache_creation_input_tokens": 100,
}
OPENAI_USAGE = {
    "input_tokens": 900,
    "input_tokens_details": {"cached_tokens": 300},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 5},
    "total_tokens": 940,
}


def cache_dir() -> Path:
    return Path(
        os.environ.get("STEPKIT_REALCLI_CACHE") or Path.home() / ".cache" / "stepkit-realcli"
    )


def version(name: str) -> str:
    """The version the preset was checked against (the one installed)."""
    return PRESETS[name].checked[-1]


def install(name: str) -> Path:
    """Install ``name`` at its checked version into the cache dir (once);
    the directory holding its executable."""
    installer, package = PACKAGES[name]
    wanted = version(name)
    if installer == "npm":
        prefix = cache_dir() / "npm"
        bin_dir = prefix / "node_modules" / ".bin"
        meta = prefix / "node_modules" / package / "package.json"
        if not meta.is_file() or json.loads(meta.read_text())["version"] != wanted:
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-audit",
                    "--no-fund",
                    f"{package}@{wanted}",
                ],
                check=True,
                capture_output=True,
                timeout=900,
            )
    else:
        venv = cache_dir() / "aider-venv"
        bin_dir = venv / "bin"
        if not (bin_dir / "aider").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
            subprocess.run(
                [str(bin_dir / "pip"), "install", "-q", f"{package}=={wanted}"],
                check=True,
                capture_output=True,
                timeout=1800,
            )
    return bin_dir


class Model:
    """The loopback API for one CLI and the model's scripted turns."""

    def __init__(self, name: str, root: Path):
        self.name = name
        self.root = root
        self.api: Any = ResponsesAPI() if name == "codex" else MessagesAPI()
        self._aider_reply: list[str] = []

    def __enter__(self) -> Self:
        self.api.__enter__()
        self.api.responder = _aider_asks_again if self.name == "aider" else _side_requests
        return self

    def __exit__(self, *exc: object) -> None:
        self.api.__exit__(*exc)

    def env(self, bin_dir: Path) -> dict[str, str]:
        """The CLI's environment: PATH with its bin dir, a temp home, the loopback API."""
        home = self.root / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
        }
        if self.name == "codex":
            codex_home = home / ".codex"
            codex_home.mkdir(exist_ok=True)
            (codex_home / "config.toml").write_text(
                'model = "gpt-test"\nmodel_provider = "loopback"\n'
                "[model_providers.loopback]\n"
                f'name = "loopback"\nbase_url = "{self.api.base_url}"\nenv_key = "OPENAI_API_KEY"\n'
                'wire_api = "responses"\nrequest_max_retries = 1\nstream_max_retries = 1\n'
            )
            return {**env, "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": self.api.api_key}
        env.update(ANTHROPIC_API_KEY=self.api.api_key)
        if self.name == "claude":
            # a user's home has one, which the sandbox keeps read-only (agent_clis.UNSAVED)
            config = home / ".claude.json"
            if not config.exists():
                config.write_text(json.dumps({"numStartups": 1, "hasCompletedOnboarding": True}))
            env.update(
                ANTHROPIC_BASE_URL=self.api.base_url,
                ANTHROPIC_MODEL=ANTHROPIC_MODEL,
                DISABLE_TELEMETRY="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
        elif self.name == "aider":
            env.update(
                ANTHROPIC_API_BASE=self.api.base_url, AIDER_MODEL=f"anthropic/{ANTHROPIC_MODEL}"
            )
        else:
            config = {
                "model": f"anthropic/{ANTHROPIC_MODEL}",
                "provider": {"anthropic": {"options": {"baseURL": f"{self.api.base_url}/v1"}}},
            }
            env.update(
                OPENCODE_CONFIG_CONTENT=json.dumps(config),
                OPENCODE_DISABLE_MODELS_FETCH="1",
                OPENCODE_DISABLE_AUTOUPDATE="1",
            )
        return env

    # -- the model's turns -------------------------------------------------

    def write(self, path: Path, content: str, old: str = "") -> None:
        """A turn that writes ``content`` to ``path`` (aider: an edit block
        replacing ``old``, sent with the next :meth:`say`)."""
        if self.name == "claude":
            if path.exists():  # claude and opencode overwrite only a file they have read
                self.api.reply_tool("Read", {"file_path": str(path)})
            self.api.reply_tool("Write", {"file_path": str(path), "content": content})
        elif self.name == "opencode":
            if path.exists():
                self.api.reply_tool("read", {"filePath": str(path)})
            self.api.reply_tool("write", {"filePath": str(path), "content": content})
        elif self.name == "codex":
            self.api.reply_call(
                "exec_command", {"cmd": f"cat > {path} <<'STEPKIT_EOF'\n{content}STEPKIT_EOF"}
            )
        else:
            self._aider_reply.append(
                f"{path.name}\n```python\n<<<<<<< SEARCH\n{old}=======\n{content}"
                ">>>>>>> REPLACE\n```\n"
            )

    def shell(self, command: str) -> None:
        """A turn that runs ``command``."""
        if self.name == "claude":
            self.api.reply_tool("Bash", {"command": command, "description": "run it"})
        elif self.name == "opencode":
            self.api.reply_tool("bash", {"command": command, "description": "run it"})
        elif self.name == "codex":
            self.api.reply_call("exec_command", {"cmd": command})
        else:
            raise ValueError("aider's model does not run commands")

    def say(self, text: str, delay_s: float = 0.0) -> None:
        """The final answer (with usage)."""
        if self.name == "codex":
            self.api.reply_text(text, usage=OPENAI_USAGE, delay_s=delay_s)
            return
        body = "\n".join([*self._aider_reply, text])
        self._aider_reply = []
        self.api.reply_text(body, usage=USAGE, model=ANTHROPIC_MODEL, delay_s=delay_s)

    def review(self, file: str, problem: str) -> str:
        """The reviewer's answer, one minor finding, as the model gives it
        to each CLI: structured where stepkit asks the CLI for its schema
        (claude's ``StructuredOutput`` tool, codex's ``--output-schema``),
        else as text; the report stepkit makes of it."""
        finding = ReviewFinding(severity="minor", file=file, criterion="none", problem=problem)
        if self.name in ("claude", "codex"):
            answer = {"findings": [finding.model_dump()]}
            if self.name == "claude":
                self.api.reply_tool("StructuredOutput", answer)
            else:
                self.api.reply_text(json.dumps(answer), usage=OPENAI_USAGE)
            return report_of([finding.finding()])
        text = f"🟢 {file}: {problem}"
        self.say(text)
        return report_of(text_findings(text))

    def fail(self, status: int, kind: str = "api_error", message: str = "scripted failure") -> None:
        """One API error response."""
        self.api.error(status, kind, message)


def _aider_asks_again(body: dict[str, Any]) -> Scripted | None:
    """aider adds the files a reply named that were not in the chat and asks
    again: the model gives the same answer, now that it sees them."""
    messages = body.get("messages") or []
    if not messages or "I added these files to the chat" not in json.dumps(
        messages[-1].get("content")
    ):
        return None
    previous = next(m for m in reversed(messages) if m.get("role") == "assistant")
    content = previous["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    return Scripted(
        200,
        {
            "id": "msg_again",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 300, "output_tokens": 20},
        },
    )


def _side_requests(body: dict[str, Any]) -> Scripted | None:
    """A CLI's requests without tools (titles, summaries) get a short answer
    and leave the scripted turns alone."""
    if body.get("tools"):
        return None
    return Scripted(
        200,
        {
            "id": "msg_side",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": "Greeting"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    )
