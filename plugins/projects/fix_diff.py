"""A formatter that only rewrites, run as a check: ``python -m
stepkit.plugins.projects.fix_diff -- COMMAND…`` keeps the bytes of the
files ``COMMAND`` names after ``--files``, runs it, and puts every file it
changed back as it was, naming each (with its diff).  Exit 1 when a file
would change, else ``COMMAND``'s own exit code.

This is the check mode of a pre-commit or prek formatter hook
(:mod:`stepkit.plugins.projects.format_check`): pre-commit has no dry run,
and the hook's pinned version and arguments are the point of running it.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path


def named_files(command: list[str]) -> list[str]:
    """The words after ``--files`` up to the next option."""
    if "--files" not in command:
        return []
    taken = []
    for word in command[command.index("--files") + 1 :]:
        if word.startswith("-") and not word.startswith("./"):
            break
        taken.append(word)
    return taken


def main(argv: list[str]) -> int:
    """Run the command after ``--``; fail naming each file it changed, changed back."""
    command = argv[argv.index("--") + 1 :] if "--" in argv else argv
    if not command:
        print("usage: python -m stepkit.plugins.projects.fix_diff -- COMMAND…", file=sys.stderr)
        return 2
    kept = {name: Path(name).read_bytes() for name in named_files(command) if Path(name).is_file()}
    try:
        code = subprocess.run(command, check=False).returncode
    except OSError as error:
        print(f"{command[0]}: {error.strerror}", file=sys.stderr)
        return 127
    changed = [name for name, data in kept.items() if Path(name).read_bytes() != data]
    for name in changed:
        now = Path(name).read_bytes().decode("utf-8", "replace").splitlines(keepends=True)
        before = kept[name].decode("utf-8", "replace").splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff(before, now, f"a/{name}", f"b/{name}"))
        Path(name).write_bytes(kept[name])
    if changed:
        print("would reformat:", *changed, sep="\n  ")
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
