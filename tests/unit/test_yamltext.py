"""YAML is read by libyaml's parser when PyYAML has it, with the answers
and the errors of ``yaml.safe_load``."""

from __future__ import annotations

import pytest
import yaml

from stepkit.yamltext import dump_yaml, load_yaml, safe_loader

TEXT = "name: ci\non: [push]\njobs:\n  test:\n    steps:\n      - run: make test\n    when: 2024-01-02\n"


def test_the_c_parser_is_used_when_pyyaml_has_it():
    assert safe_loader() is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_the_answers_and_errors_are_safe_loads():
    assert load_yaml(TEXT) == yaml.safe_load(TEXT)
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [1, 2\n")
    with pytest.raises(yaml.YAMLError):  # no arbitrary objects
        load_yaml("x: !!python/object/apply:os.system ['true']\n")


def test_nodes_keep_their_lines():
    node = yaml.compose(TEXT, Loader=safe_loader())
    jobs = {k.value: v for k, v in node.value}["jobs"]
    assert jobs.start_mark.line == 3


def test_dumped_data_reads_back_the_same_whatever_its_strings_hold():
    shared = {"run": "set -e\necho \"$X\" 'y'\n"}
    data = {
        "on": {"types": ["created"]},
        "strings": ["- [x]: {a}", "@PROJECT@", '"', "a # b", "yes", "", " lead", "Ünï 🚀", "a\rb"],
        "steps": [shared, shared],
        "number": 30,
        "flag": False,
    }
    text = dump_yaml(data)
    assert load_yaml(text) == data
    assert "&" not in text and "*" not in text  # a value used twice is written twice
    assert "  - run: |\n      set -e\n" in text  # a list under its key, a script as a block
