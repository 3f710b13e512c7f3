"""Deno plugin: tasks of deno.json(c) when they exist, deno's own tools otherwise."""

from stepkit.testing import resolve_gates

DENO = "stepkit.plugins.projects.deno"


def test_plain_config_uses_deno_tools_and_no_build(stepkit_project):
    project = stepkit_project({"deno.json": '{"imports": {}}'})
    assert resolve_gates(project) == {
        "format": (
            "deno fmt {files:.js,.jsx,.ts,.tsx,.mjs,.cjs,.mts,.cts,.json,.jsonc,.md,.markdown}",
            DENO,
        ),
        "lint": ("deno lint", DENO),
        "build": (None, None),
        "tests": ("deno test -A", DENO),
    }


def test_tasks_in_a_jsonc_config_win(stepkit_project):
    project = stepkit_project(
        {
            "deno.jsonc": """{
          // comments and trailing commas are fine in deno.jsonc
          "tasks": {
            "check": "deno check main.ts", /* the type check */
            "test": "deno test --allow-read",
          },
        }""",
        }
    )
    gates = resolve_gates(project)
    assert gates["build"] == ("deno task check", DENO)
    assert gates["tests"] == ("deno task test", DENO)
    assert gates["format"] == (
        "deno fmt {files:.js,.jsx,.ts,.tsx,.mjs,.cjs,.mts,.cts,.json,.jsonc,.md,.markdown}",
        DENO,
    )


def test_a_string_with_slashes_is_not_a_comment(stepkit_project):
    project = stepkit_project(
        {"deno.jsonc": '{"tasks": {"build": "deno run https://x.test/b.ts"}}'}
    )
    assert resolve_gates(project)["build"] == ("deno task build", DENO)


def test_deno_answers_before_node_in_a_mixed_project(stepkit_project):
    project = stepkit_project(
        {
            "deno.json": "{}",
            "package.json": '{"scripts": {"test": "vitest run", "build": "vite build"}}',
        }
    )
    gates = resolve_gates(project)
    assert gates["tests"] == ("deno test -A", DENO)
    assert gates["build"] == ("npm run build", "stepkit.plugins.projects.node")
