"""The command line of a bench script, read before it measures anything.

``--help`` prints the script's module docstring (what it measures, as
written) and its options; an unknown, misspelt or incomplete option is
refused in one line with exit code 2, so a typo never starts a run of
minutes.  Every bench takes ``--smoke``; a script adds its own options to
the parser, those that choose what the run is (a size, a comparison) to
:attr:`BenchParser.modes`, which takes one of them at a time.

Once the options are read, the processes a bench starts get Python's
bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped; ``__pycache__/``
is git-ignored) and stepkit's own modules compiled, as an installed package
has them: start-up figures without it would mostly time the compiler.
"""

from __future__ import annotations

import argparse
import compileall
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class BenchParser(argparse.ArgumentParser):
    """A bench script's options: ``--smoke`` and what the script adds."""

    def __init__(self, doc: str) -> None:
        super().__init__(
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            allow_abbrev=False,  # ``--smok`` is a typo, not ``--smoke``
        )
        self.modes = self.add_mutually_exclusive_group()
        self.modes.add_argument(
            "--smoke",
            action="store_true",
            help="the smallest run through every code path (the test suite's); "
            "its figures are not judged",
        )

    def add_against(self) -> None:
        """``--against PYTHON``: this install and another one, in turns."""
        self.modes.add_argument(
            "--against",
            metavar="PYTHON",
            help="compare this install with the one of another interpreter "
            "(e.g. a venv of an earlier commit), the two taking turns",
        )

    def parse_args(self, *args, **kwargs):
        """The options, then the bytecode cache on for what the bench starts."""
        parsed = super().parse_args(*args, **kwargs)
        bytecode_on()
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} ({self.prog} --help shows the usage)\n")


def bytecode_on() -> None:
    """Bytecode cache on for child processes, and warm for stepkit's own modules."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in ("stepkit", "plugins"):
        compileall.compile_dir(REPO / package, quiet=1)
