"""The default suite's selection (tests/conftest.py): ``pytest`` with no
paths and no ``-m`` leaves out the ``slow`` and ``bench`` tests and reports
them deselected; a ``-m`` expression or named paths decide for themselves."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import pytest_collection_modifyitems


class Item:
    def __init__(self, name: str, *marks: str) -> None:
        self.name, self.marks = name, marks

    def get_closest_marker(self, mark: str):
        return mark if mark in self.marks else None


def select(markexpr: str = "", source=pytest.Config.ArgsSource.TESTPATHS):
    deselected: list[Item] = []
    config = SimpleNamespace(
        option=SimpleNamespace(markexpr=markexpr),
        args_source=source,
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)),
    )
    items = [
        Item("unit"),
        Item("whole step", "slow"),
        Item("smoke", "bench"),
        Item("cli", "realcli"),
    ]
    pytest_collection_modifyitems(config, items)
    return [i.name for i in items], [i.name for i in deselected]


def test_the_default_suite_leaves_out_slow_and_bench_and_says_so():
    assert select() == (["unit", "cli"], ["whole step", "smoke"])
    assert select(source=pytest.Config.ArgsSource.INVOCATION_DIR) == (
        ["unit", "cli"],
        ["whole step", "smoke"],
    )


def test_a_mark_expression_or_named_paths_keep_every_test():
    everything = ["unit", "whole step", "smoke", "cli"]
    assert select(markexpr="slow or bench") == (everything, [])
    assert select(source=pytest.Config.ArgsSource.ARGS) == (everything, [])
