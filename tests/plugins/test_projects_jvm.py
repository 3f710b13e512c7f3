"""JVM plugin: Maven and Gradle, through the wrapper when the project has one."""

import pytest

from stepkit.testing import resolve_gates

JVM = "stepkit.plugins.projects.jvm"
POM = "<project><modelVersion>4.0.0</modelVersion>{plugins}</project>\n"


def test_maven_builds_test_sources_and_verifies(stepkit_project):
    project = stepkit_project({"pom.xml": POM.format(plugins="")})
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": (None, None),
        "build": ("mvn -q test-compile", JVM),
        "tests": ("mvn -q verify", JVM),
    }


def test_maven_wrapper_and_configured_plugins(stepkit_project):
    plugins = (
        "<build><plugins><plugin><artifactId>spotless-maven-plugin</artifactId></plugin>"
        "<plugin><artifactId>maven-checkstyle-plugin</artifactId></plugin></plugins></build>"
    )
    project = stepkit_project({"pom.xml": POM.format(plugins=plugins), "mvnw": "#!/bin/sh\n"})
    assert {gate: cmd for gate, (cmd, _) in resolve_gates(project).items()} == {
        "format": "./mvnw -q spotless:apply",
        "lint": "./mvnw -q checkstyle:check",
        "build": "./mvnw -q test-compile",
        "tests": "./mvnw -q verify",
    }


@pytest.mark.parametrize("build_file", ["build.gradle", "build.gradle.kts", "settings.gradle.kts"])
def test_gradle_without_wrapper(stepkit_project, stepkit_pm, build_file):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project({build_file: "plugins { java }\n"})
    assert project_types(stepkit_pm(project), project) == ["gradle"]
    gates = resolve_gates(project)
    assert gates["build"] == ("gradle assemble", JVM)
    assert gates["tests"] == ("gradle test", JVM)
    assert gates["format"] == (None, None)


def test_gradle_wrapper_and_spotless(stepkit_project):
    project = stepkit_project(
        {
            "build.gradle.kts": 'plugins { id("com.diffplug.spotless") version "6.25.0" }\n',
            "gradlew": "#!/bin/sh\n",
        }
    )
    assert {gate: cmd for gate, (cmd, _) in resolve_gates(project).items()} == {
        "format": "./gradlew spotlessApply",
        "lint": "./gradlew spotlessCheck",
        "build": "./gradlew assemble",
        "tests": "./gradlew test",
    }


def test_maven_wins_over_gradle(stepkit_project):
    project = stepkit_project({"pom.xml": POM.format(plugins=""), "build.gradle": ""})
    assert resolve_gates(project)["tests"] == ("mvn -q verify", JVM)
