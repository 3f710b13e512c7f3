"""The ``[commands]`` table ``stepkit init`` writes into ``stepkit.toml``:
each gate's command as it ran on the project's HEAD
(:func:`~stepkit.workspace.proof.prove_on_head`), commented with where it
came from and how it did; a command that could not run there is written
commented out, with why, so the user sees and fixes the choice once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.baseline import BaselineRecord
from stepkit.workspace.proof import Proof

CONFIG = "stepkit.toml"
#: a ``[commands]`` table header, or any table header after it
_HEADER = lazy_compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")


def commands_table_line(text: str) -> int | None:
    """The index of the line opening ``[commands]`` in ``text`` (None: none)."""
    for number, line in enumerate(text.splitlines()):
        found = _HEADER.match(line)
        if found and found.group(1).strip() == "commands":
            return number
    return None


def has_commands(project: Path) -> bool:
    """``stepkit.toml`` already has a ``[commands]`` table (init keeps it
    unless told ``--force``)."""
    config = project / CONFIG
    return config.is_file() and commands_table_line(config.read_text(encoding="utf-8")) is not None


def proven(record: BaselineRecord | None) -> str | None:
    """How a command did on HEAD, as the comment above it says; None: not proven."""
    if record is None or record.could_not_run is not None:
        return None
    if record.status == "pass":
        return f"ran on HEAD: {record.summary or 'passed'}"
    return f"ran on HEAD: {record.summary or record.status} at HEAD (pre-existing)"


def render_table(gates: list[dict[str, Any]], proof: Proof) -> str:
    """The ``[commands]`` table: per gate (``stepkit detect --json``'s
    ``gates``), the command ``proof`` settled on, where it came from and how
    it did on HEAD, and each candidate passed over and why; a gate none of
    whose candidates ran is switched off (NOT RUN), its first one written
    commented out."""
    from stepkit import gatetable

    lines = [
        "[commands]",
        "# Written by `stepkit init`: each command was run once on HEAD in a scratch copy.",
    ]
    for gate in gates:
        name = gate["name"]
        key = gatetable.gate(name).keys[0]
        passed = proof.passed_over.get(name, [])
        if name in proof.commands:
            command, plugin, source = proof.commands[name]
        else:
            command, plugin, source = gate["command"], gate["plugin"], gate.get("source")
        if not command:
            lines.append(f"# {key}: no command found (the gate is NOT RUN): set one here")
            continue
        value = f"{key} = {json.dumps(command, ensure_ascii=False)}"
        if name not in proof.commands and passed:
            # switched off, said so: a run would stop on it again (set it, and it runs)
            lines.append(f"# {key}: no candidate could run on HEAD:")
            lines += [f"#   `{other}`: {why}" for other, why in passed]
            lines += [f"# {value}", f'{key} = ""  # NOT RUN until set']
            continue
        lines += [
            f"# passed over `{other}`: it could not run: {why}"
            for other, why in passed
            if other != command
        ]
        origin = f"from {source}" if source else f"chosen by {plugin or 'you at init'}"
        lines.append(f"# {key}: {origin}")
        if name in proof.kept:
            lines += ["# kept by you at init, though it could not run on HEAD", value]
            continue
        result = proven(proof.records.get(name))
        if result is not None:
            lines += [f"# {result}", value]
            continue
        if gate.get("fault") and name not in proof.commands:
            lines += [
                f"# not proved: {gate['fault']}",
                f"# {value}",
                f'{key} = ""  # NOT RUN until set',
            ]
            continue
        lines += [f"# not proved: {proof.problem or 'it was not measured'}", f"# {value}"]
    return "\n".join(lines) + "\n"


def write_table(project: Path, table: str) -> Path:
    """Put ``table`` in ``stepkit.toml`` in place of its ``[commands]`` table,
    or after what it holds; the file is created when there is none."""
    config = project / CONFIG
    text = config.read_text(encoding="utf-8") if config.is_file() else ""
    lines = text.splitlines()
    start = commands_table_line(text)
    if start is None:
        kept = text.rstrip("\n")
        config.write_text((kept + "\n\n" if kept else "") + table, encoding="utf-8")
        return config
    end = next((n for n in range(start + 1, len(lines)) if _HEADER.match(lines[n])), len(lines))
    before = "\n".join(lines[:start]).rstrip("\n")
    after = "\n".join(lines[end:])
    parts = [part for part in (before, table.rstrip("\n"), after) if part]
    config.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return config
