"""``stepkit trust``: show how the project's local plugins (``stepconf.py``,
the project's modules named in ``[tool.stepkit] plugins``) differ from the
bytes last trusted, and trust them as they are now."""

from __future__ import annotations

import argparse

from stepkit.config import load_config, resolve_project_dir
from stepkit.trust import local_plugins, trust_all


def run(args: argparse.Namespace) -> int:
    """Print each untrusted plugin's diff, then the files now trusted."""
    project_dir = resolve_project_dir(args.project_dir)
    stepconf = project_dir / "stepconf.py"
    plugins = local_plugins(
        project_dir, load_config(project_dir).plugins, stepconf if stepconf.is_file() else None
    )
    changed = trust_all(project_dir, plugins, lambda diff: print(diff, end=""))
    for rel in changed:
        print(f"trusted: {rel}")
    if not changed:
        print(f"nothing to trust: {len(plugins)} local plugin(s), all trusted already")
    return 0
