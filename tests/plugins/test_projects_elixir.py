"""Elixir plugin: mix commands; format needs .formatter.exs, credo must be a dependency."""

from stepkit.testing import resolve_gates

ELIXIR = "stepkit.plugins.projects.elixir"
MIX = """defmodule Demo.MixProject do
  use Mix.Project
  defp deps do
    [{:credo, "~> 1.7", only: [:dev, :test], runtime: false}]
  end
end
"""


def test_full_mix_project(stepkit_project):
    project = stepkit_project({"mix.exs": MIX, ".formatter.exs": '[inputs: ["lib/**/*.ex"]]\n'})
    assert resolve_gates(project) == {
        "format": ("mix format {files:.ex,.exs}", ELIXIR),
        "lint": ("mix credo", ELIXIR),
        "build": ("mix compile --warnings-as-errors", ELIXIR),
        "tests": ("mix test", ELIXIR),
    }


def test_without_formatter_config_or_credo(stepkit_project):
    project = stepkit_project({"mix.exs": "defmodule Demo.MixProject do\nend\n"})
    gates = resolve_gates(project)
    assert gates["format"] == (None, None)
    assert gates["lint"] == (None, None)
    assert gates["tests"] == ("mix test", ELIXIR)
