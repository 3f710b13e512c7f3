"""JVM builds: Maven (``pom.xml``) and Gradle (``build.gradle[.kts]`` /
``settings.gradle[.kts]``), through the project's wrapper (``./mvnw``,
``./gradlew``) when it has one.

- Maven: build ``mvn -q test-compile`` (main and test sources), tests ``mvn
  -q verify`` (unit and integration tests and the checks bound to verify);
  format ``spotless:apply`` and lint ``checkstyle:check`` only when the pom
  configures the Spotless or Checkstyle plugin.
- Gradle: build ``assemble``, tests ``test``; format ``spotlessApply`` and
  lint ``spotlessCheck`` only when the build uses Spotless.

Maven wins when a project has both.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

_GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")


def _maven(project_dir: Path) -> dict[str, str]:
    pom = _shared.read_text(project_dir / "pom.xml")
    mvn = "./mvnw" if (project_dir / "mvnw").is_file() else "mvn"
    commands = {"build": f"{mvn} -q test-compile", "tests": f"{mvn} -q verify"}
    if "spotless-maven-plugin" in pom:
        commands["format"] = f"{mvn} -q spotless:apply"
    if "maven-checkstyle-plugin" in pom:
        commands["lint"] = f"{mvn} -q checkstyle:check"
    return commands


def _gradle(project_dir: Path) -> dict[str, str]:
    build = "".join(_shared.read_text(project_dir / name) for name in _GRADLE_FILES)
    gradle = "./gradlew" if (project_dir / "gradlew").is_file() else "gradle"
    commands = {"build": f"{gradle} assemble", "tests": f"{gradle} test"}
    if "spotless" in build:
        commands["format"] = f"{gradle} spotlessApply"
        commands["lint"] = f"{gradle} spotlessCheck"
    return commands


def _detect(project_dir: Path) -> str | None:
    if (project_dir / "pom.xml").is_file():
        return "maven"
    if _shared.first_file(project_dir, _GRADLE_FILES):
        return "gradle"
    return None


def commands(project_dir: Path) -> dict[str, str] | None:
    """Maven's or Gradle's gate commands; None when the project uses neither."""
    kind = _detect(project_dir)
    if kind == "maven":
        return _maven(project_dir)
    if kind == "gradle":
        return _gradle(project_dir)
    return None


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks(_detect, commands)
