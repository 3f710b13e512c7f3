"""YAML text to Python data or nodes, through libyaml's parser when PyYAML
was built with it (its wheels are): the same safe constructor as
``yaml.safe_load``, about ten times faster.  The built-in graph, parsed by
every run and resume, takes 39 ms in pure Python and 3 ms in C; a project's
CI files are read by every ``detect`` and ``verify``.

A leaf module: it imports PyYAML when first called.
"""

from __future__ import annotations

from typing import Any


def safe_loader() -> type:
    """libyaml's ``CSafeLoader`` when PyYAML has it, else ``SafeLoader``."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """What ``yaml.safe_load(text)`` gives; raises ``yaml.YAMLError`` as it does."""
    import yaml

    return yaml.load(text, Loader=safe_loader())
