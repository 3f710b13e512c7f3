"""Ruby detection from the gemspec, the Rakefile and the lint configs."""

from __future__ import annotations

from stepkit.testing import resolve_gates
from tests.support.detect import detected

RUBY = "stepkit.plugins.projects.ruby"
GEMSPEC = """\
Gem::Specification.new do |spec|
  spec.name = "demo"
  spec.version = "0.1.0"
  spec.add_dependency "zeitwerk", "~> 2.6"
  spec.add_development_dependency "rspec", "~> 3.12"
  spec.add_development_dependency("rubocop")
end
"""
RAKEFILE = """\
require "bundler/gem_tasks"
require "rspec/core/rake_task"

RSpec::Core::RakeTask.new(:spec)

task default: %i[spec rubocop]
"""


def test_a_gem_with_rspec_in_its_gemspec_runs_its_specs(stepkit_project):
    project = stepkit_project(
        {
            "Gemfile": 'source "https://rubygems.org"\n\ngemspec\n',
            "demo.gemspec": GEMSPEC,
            "Rakefile": RAKEFILE,
            "spec/demo_spec.rb": "",
            ".rubocop.yml": "AllCops:\n  NewCops: enable\n",
        }
    )
    gates = detected(project)
    assert (gates["tests"], gates["lint"]) == ("bundle exec rspec", "bundle exec rubocop")


def test_standard_yml_chooses_standardrb(stepkit_project):
    gemspec = GEMSPEC.replace(
        '("rubocop")', '("rubocop")\n  spec.add_development_dependency("standard")'
    )
    project = stepkit_project(
        {"Gemfile": "gemspec\n", "demo.gemspec": gemspec, ".standard.yml": "ruby_version: 3.1\n"}
    )
    assert resolve_gates(project)["lint"] == ("bundle exec standardrb", RUBY)


def test_standard_yml_without_the_gem_in_the_bundle_is_not_standardrb(stepkit_project):
    # `bundle exec standardrb` fails when the bundle lacks the gem: the rubocop it has lints
    project = stepkit_project(
        {"Gemfile": "gemspec\n", "demo.gemspec": GEMSPEC, ".standard.yml": "ruby_version: 3.1\n"}
    )
    assert resolve_gates(project)["lint"] == ("bundle exec rubocop", RUBY)


def test_minitest_test_task(stepkit_project):
    project = stepkit_project(
        {
            "Gemfile": 'gem "minitest"\n',
            "Rakefile": 'require "minitest/test_task"\nMinitest::TestTask.create\n\ntask default: :test\n',
            "test/demo_test.rb": "",
        }
    )
    assert resolve_gates(project)["tests"] == ("bundle exec rake test", RUBY)


def test_the_rakefile_default_task_when_it_runs_the_tests(stepkit_project):
    project = stepkit_project(
        {
            "Gemfile": 'gem "rake-compiler"\n',
            "Rakefile": 'Dir.glob("tasks/*.rake").each { |r| load r }\n\ntask default: [:compile, :test]\n',
            "tasks/test.rake": "Rake::TestTask.new(:test)\n",
        }
    )
    assert resolve_gates(project)["tests"] == ("bundle exec rake", RUBY)


def test_a_gemspec_without_a_gemfile_runs_without_bundler(stepkit_project):
    project = stepkit_project({"demo.gemspec": GEMSPEC, "spec/demo_spec.rb": ""})
    assert resolve_gates(project)["tests"] == ("rspec", RUBY)


def test_rspec_declared_without_a_spec_dir_falls_back_to_rake(stepkit_project):
    project = stepkit_project(
        {"Gemfile": 'gem "rspec"\n', "Rakefile": "Rake::TestTask.new(:test)\n"}
    )
    assert resolve_gates(project)["tests"] == ("bundle exec rake test", RUBY)
