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

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")


class _Build(NamedTuple):
    #: ``maven`` or ``gradle``.
    tool: str
    #: how a goal or task runs: ``./mvnw -q``, ``mvn -q``, ``./gradlew``, ``gradle``.
    run: str
    #: the pom, or the Gradle build files joined: where plugins are named.
    text: str


def _read(project_dir: Path) -> _Build | None:
    if (project_dir / "pom.xml").is_file():
        mvn = "./mvnw" if (project_dir / "mvnw").is_file() else "mvn"
        return _Build("maven", f"{mvn} -q", _shared.read_text(project_dir / "pom.xml"))
    if _shared.first_file(project_dir, _GRADLE_FILES):
        gradle = "./gradlew" if (project_dir / "gradlew").is_file() else "gradle"
        text = "".join(_shared.read_text(project_dir / name) for name in _GRADLE_FILES)
        return _Build("gradle", gradle, text)
    return None


def _goal(
    maven: str, gradle: str, *, maven_needs: str = "", gradle_needs: str = ""
) -> Callable[[_Build], str | None]:
    """A gate's command: the Maven goal or the Gradle task, each only when the
    build names the plugin it ``needs``."""

    def command(build: _Build) -> str | None:
        goal, needs = (maven, maven_needs) if build.tool == "maven" else (gradle, gradle_needs)
        return f"{build.run} {goal}" if needs in build.text else None

    return command


JVM = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name=lambda build: build.tool,
    format=_goal(
        "spotless:apply",
        "spotlessApply",
        maven_needs="spotless-maven-plugin",
        gradle_needs="spotless",
    ),
    lint=_goal(
        "checkstyle:check",
        "spotlessCheck",
        maven_needs="maven-checkstyle-plugin",
        gradle_needs="spotless",
    ),
    build=_goal("test-compile", "assemble"),
    tests=_goal("verify", "test"),
)
globals().update(JVM.hookimpls())
