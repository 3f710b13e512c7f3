"""What Python's quality tools share: the files that hold their settings
beside others' (only their own sections count there), and how they start."""

#: ``pyproject.toml``, ``setup.cfg`` and ``tox.ini``.
SHARED_CONFIGS = (r"pyproject\.toml", r"setup\.cfg", r"tox\.ini")


def invocations(command: str) -> tuple[str, ...]:
    """``command`` alone, as the interpreter's module and through uv."""
    return (command, f"python -m {command}", f"python3 -m {command}", f"uv run {command}")
