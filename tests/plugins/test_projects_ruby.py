"""Ruby plugin: bundle exec rspec / rake test / rubocop — only what the project has."""

from stepkit.testing import resolve_gates

RUBY = "stepkit.plugins.projects.ruby"


def test_rspec_and_rubocop_from_the_gemfile(stepkit_project):
    project = stepkit_project(
        {
            "Gemfile": "source 'https://rubygems.org'\ngem 'rspec', '~> 3.12'\ngem \"rubocop\"\n",
            "spec/demo_spec.rb": "",
        }
    )
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": ("bundle exec rubocop", RUBY),
        "build": (None, None),
        "tests": ("bundle exec rspec", RUBY),
    }


def test_rake_test_task(stepkit_project):
    project = stepkit_project(
        {
            "Gemfile": "gem 'minitest'\ngem 'standard'\n",
            "Rakefile": "require 'rake/testtask'\nRake::TestTask.new(:test)\n",
            "test/demo_test.rb": "",
        }
    )
    gates = resolve_gates(project)
    assert gates["tests"] == ("bundle exec rake test", RUBY)
    assert gates["lint"] == ("bundle exec standardrb", RUBY)


def test_no_test_task_no_tests_gate(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project({"Gemfile": "gem 'rails'\n", "Rakefile": "task :deploy do\nend\n"})
    assert project_types(stepkit_pm(project), project) == ["ruby"]
    assert all(answer == (None, None) for answer in resolve_gates(project).values())
