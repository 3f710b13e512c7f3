"""Built-ins are registered without being imported (stepkit/lazyplugins.py):
the hooks and options they are registered with are those the modules
declare (read from their source, nothing written beside them), every
project type answers nothing without its markers (declared once, which is
why one left unimported changes no answer), an evidence parser is not
imported for output without its markers, and a command imports only the
plugins it calls.  How the source is read and cached:
tests/unit/test_hooksource.py."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.config import Config
from stepkit.gatetable import GATE_ORDER
from stepkit.lazyplugins import LazyPlugin, declared_hooks
from stepkit.pluginmanager import DEFAULT_PLUGINS, first_answer, get_plugin_manager, get_plugins
from stepkit.plugins.evidence._shared import MARKERS as PARSER_MARKERS
from stepkit.plugins.projects import HOOKS, MARKERS
from stepkit.plugins.projects._base import ProjectType
from stepkit.workspace.evidence import condense
from tests.support.evidence_logs import evidence_pm

ROOT = Path(__file__).resolve().parents[2]

_PROBE = (
    "import json, sys\n"
    "from stepkit.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('stepkit.plugins.'))))\n"
)


def imported_plugins(project: Path, *args: str) -> list[str]:
    """The built-in plugin modules ``stepkit ARGS`` imports, run in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _registered_options(pm, name: str) -> dict[str, dict[str, bool]]:
    """The hookimpls pluggy holds for the plugin ``name``, with their true options."""
    plugin = pm.get_plugin(name)
    found = {}
    for caller in pm.get_hookcallers(plugin):
        impl = next(i for i in caller.get_hookimpls() if i.plugin is plugin)
        found[caller.name] = {key: value for key, value in impl.opts.items() if value}
    return found


def test_every_stand_in_holds_its_modules_hooks_with_their_options(tmp_path):
    """What pluggy sees before a built-in is imported is what it would see
    after: the same hooks and options (a project type that binds its
    hookimpls at import: every project-type hook, each answering None where
    the module has none)."""
    pm = get_plugin_manager(tmp_path)
    family = []
    for name in DEFAULT_PLUGINS:
        declared = declared_hooks(importlib.import_module(name))
        registered = _registered_options(pm, name)
        plugin = pm.get_plugin(name)
        if isinstance(plugin, LazyPlugin) and plugin.__stepkit_hooks__ is None:
            family.append(name)
            assert set(registered) == set(HOOKS) and declared.items() <= registered.items()
        else:
            assert registered == declared, name
    assert set(family) == {*MARKERS, "stepkit.plugins.projects.taskrunners"}


def test_a_built_in_is_registered_without_being_imported(tmp_path):
    probe = (
        "import json, sys\n"
        "from stepkit.pluginmanager import get_plugin_manager\n"
        "get_plugin_manager()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('stepkit.plugins.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    # the project types' package (MARKERS, HOOKS) and what runs at import of the core
    imported = json.loads(done.stdout)
    assert "stepkit.plugins.projects" in imported
    assert not {m for m in imported if m in DEFAULT_PLUGINS} - {"stepkit.plugins.projects"}


def _marker_file(project: Path, marker: str) -> None:
    path = project / marker.replace("*", "x")
    path.write_text("{}" if path.suffix == ".json" else "", encoding="utf-8")


@pytest.mark.parametrize("module_name", sorted(MARKERS))
def test_every_project_type_answers_nothing_without_its_markers(tmp_path, module_name):
    """Every other type's markers are there, none of its own: each of its
    hooks answers nothing, so not importing it changes no answer."""
    for other, markers in MARKERS.items():
        if other != module_name:
            for marker in markers:
                _marker_file(tmp_path, marker)
    module = importlib.import_module(module_name)
    hooks = declared_hooks(module)
    assert "stepkit_detect_project" in hooks
    assert set(hooks) <= set(HOOKS), "a project type's stand-in registers only HOOKS"
    values = {
        "project_dir": tmp_path,
        "config": Config(),
        "path": "tests/test_new.py",
        "test_file": True,
        "search_roots": [],
        "gate": "tests",
        "command": "tox",
    }
    for hook in hooks:
        function = getattr(module, hook)
        for gate in GATE_ORDER:  # stepkit_gate_command, asked for each gate
            given = {**values, "gate": gate}
            answer = function(
                **{name: given[name] for name in inspect.signature(function).parameters}
            )
            assert not answer, (
                f"{module_name}.{hook} answered {answer!r} without any of {MARKERS[module_name]}"
            )


@pytest.mark.parametrize("module_name", sorted(MARKERS))
def test_each_type_declares_the_markers_it_is_registered_by(module_name):
    """The markers the stand-in checks are the ones the type's declaration
    checks: one list, not two."""
    module = importlib.import_module(module_name)
    declared = [v for v in vars(module).values() if isinstance(v, ProjectType)]
    assert [t.markers for t in declared] == [MARKERS[module_name]]


def test_a_marker_that_is_a_directory_makes_no_project(tmp_path):
    (tmp_path / "go.mod").mkdir()
    (tmp_path / "x.gemspec").mkdir()
    types = get_plugin_manager(tmp_path).hook.stepkit_detect_project(project_dir=tmp_path)
    assert types == ["ruby"]  # a gemspec pattern matches any entry, as Ruby's read globs


@pytest.mark.parametrize(
    ("marker", "module_name"),
    [
        ("pyproject.toml", "stepkit.plugins.projects.python"),
        ("x.gemspec", "stepkit.plugins.projects.ruby"),
        ("App.csproj", "stepkit.plugins.projects.dotnet"),
    ],
)
def test_a_stand_in_answers_as_its_module_does(tmp_path, marker, module_name):
    (tmp_path / marker).write_text("", encoding="utf-8")
    pm = get_plugin_manager(tmp_path)
    plugin = pm.get_plugin(module_name)
    assert isinstance(plugin, LazyPlugin)
    expected = importlib.import_module(module_name).stepkit_detect_project(project_dir=tmp_path)
    assert expected is not None and expected in pm.hook.stepkit_detect_project(project_dir=tmp_path)


def test_a_stand_in_passes_each_argument_its_function_takes(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    pm = get_plugin_manager(tmp_path)
    answer = first_answer(
        pm, "stepkit_gate_command", gate="tests", project_dir=tmp_path, config=Config()
    )
    assert answer == (
        "python -m pytest -rfE",
        "stepkit.plugins.projects.python",
    )


def test_every_built_in_is_registered_and_listed_with_its_hooks(tmp_path):
    listed = {p["name"]: p["hooks"] for p in get_plugins(get_plugin_manager(tmp_path))}
    assert listed == {
        name: sorted(declared_hooks(importlib.import_module(name))) for name in DEFAULT_PLUGINS
    }


def test_verify_on_a_python_project_imports_only_the_python_project_type(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\nversion = '0'\n[tool.pytest.ini_options]\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n")
    imported = imported_plugins(tmp_path, "verify", "--json")
    types = [
        m.rsplit(".", 1)[1]
        for m in imported
        if m.startswith("stepkit.plugins.projects.")
        and f"stepkit.plugins.projects.{m.rsplit('.', 1)[1]}" in MARKERS
    ]
    assert types == ["python"]
    for unused in (
        "stepkit.plugins.coders.",
        "stepkit.plugins.llm.",
        "stepkit.plugins.stages.",
        "stepkit.plugins.observers.",
    ):
        assert not [m for m in imported if m.startswith(unused)], unused


def _parsers_imported(pm) -> set[str]:
    return {
        name
        for name, plugin in pm.list_name_plugin()
        if ".evidence." in name
        and isinstance(plugin, LazyPlugin)
        and plugin.__stepkit_module__ is not None
    }


def test_condensing_imports_only_the_parsers_whose_markers_the_output_holds():
    """Output that is no known tool's reaches the generic parser alone; a
    parser's marker in it (pytest's banner) imports that parser too."""
    pm = evidence_pm()
    evidence = condense(pm, "build", "make all", "cc -o app main.c\nmake: done\n", 0, None)
    assert "make: done" in evidence.text
    assert _parsers_imported(pm) == {"stepkit.plugins.evidence.generic"}
    condense(
        pm,
        "tests",
        "make check",
        "=== test session starts ===\n=== 2 passed in 0.01s ===\n",
        0,
        None,
    )
    assert "stepkit.plugins.evidence.pytest" in _parsers_imported(pm)


def test_every_evidence_parser_has_markers():
    parsers = {name for name in DEFAULT_PLUGINS if ".evidence." in name} - {
        "stepkit.plugins.evidence.generic"
    }
    assert parsers == set(PARSER_MARKERS)


def test_plugins_still_lists_every_built_in(tmp_path, capsys):
    from stepkit.cli import main

    assert main(["plugins", "--project-dir", str(tmp_path), "--json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["plugins"]]
    assert [n for n in names if n in DEFAULT_PLUGINS] == DEFAULT_PLUGINS


def test_a_built_in_that_gains_a_hook_is_called_with_nothing_regenerated(tmp_path):
    """In a copy of stepkit, a built-in gains a hookimpl: the next command
    calls it, with no table to write again."""
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "stepkit", src / "stepkit", ignore=ignore)
    shutil.copytree(ROOT / "plugins", src / "stepkit" / "plugins", ignore=ignore)
    display = src / "stepkit" / "plugins" / "observers" / "display.py"
    gained = '\n\n@hookimpl(trylast=True)\ndef stepkit_detect_notes(project_dir):\n    return ["gained"]\n'
    display.write_text(display.read_text(encoding="utf-8") + gained, encoding="utf-8")
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from stepkit.pluginmanager import get_plugin_manager\n"
        "pm = get_plugin_manager()\n"
        "print(pm.hook.stepkit_detect_notes(project_dir=Path(sys.argv[1])))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    for _ in ("parsed", "from the cache"):
        done = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert "['gained']" in done.stdout, done.stdout + done.stderr
