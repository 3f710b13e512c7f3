"""YAML text to Python data or nodes, through libyaml's parser when PyYAML
was built with it (its wheels are): the same safe constructor as
``yaml.safe_load``, about ten times faster.  The built-in graph, parsed by
every run and resume, takes 39 ms in pure Python and 3 ms in C; a project's
CI files are read by every ``detect`` and ``verify``.  And Python data to
YAML text (:func:`dump_yaml`), written by the emitter, never by templates.

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


def dump_yaml(data: Any) -> str:
    """``data`` (mappings in their order, lists, strings, numbers) as block
    YAML a person reads: a list indented under its key, a multi-line string
    as a literal block when YAML allows one (else the emitter quotes it), no
    line folded, non-ASCII text as it is, no anchors."""
    import sys

    import yaml

    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)

        def ignore_aliases(self, data: Any) -> bool:
            return True  # a value used twice is written twice: no anchors to follow

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=sys.maxsize)
