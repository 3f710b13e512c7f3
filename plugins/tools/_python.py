"""What Python's quality tools share: the files that hold their settings
beside others' (only their own sections count there)."""

#: ``pyproject.toml``, ``setup.cfg`` and ``tox.ini``.
SHARED_CONFIGS = (r"pyproject\.toml", r"setup\.cfg", r"tox\.ini")
