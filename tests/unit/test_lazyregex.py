"""Regexes compiled on first use: importing the secret masker and the fault
reader compiles none of theirs, and a lazy pattern answers as the compiled
one does."""

from __future__ import annotations

import re
import subprocess
import sys

from stepkit.lazyregex import lazy_compile

PROBE = """
import re._compiler
import dataclasses, pathlib, shlex, tokenize  # the standard library's own patterns are not counted
import stepkit.text, stepkit.lazyregex
compiled = []
compile_ = re._compiler.compile
re._compiler.compile = lambda pattern, flags: compiled.append(pattern) or compile_(pattern, flags)
import stepkit.workspace.faults, stepkit.workspace.redact
print(len(compiled))
"""


def test_importing_the_masker_and_the_fault_reader_compiles_no_regex():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"


def test_a_lazy_pattern_answers_as_the_compiled_one():
    source = r"^(?P<word>\w+)=(?P<value>\d+)$"
    lazy, real = lazy_compile(source, re.MULTILINE), re.compile(source, re.MULTILINE)
    assert lazy.pattern == source
    text = "a=1\nb=x\nc=3"
    assert [m.groupdict() for m in lazy.finditer(text)] == [
        m.groupdict() for m in real.finditer(text)
    ]
    assert lazy.search(text, 4).span() == real.search(text, 4).span()
    assert lazy.groupindex == real.groupindex and lazy.flags == real.flags
    assert lazy.sub("-", text) == real.sub("-", text)
