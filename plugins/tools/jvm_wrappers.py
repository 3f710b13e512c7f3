"""The Gradle and Maven wrappers (``gradlew``, ``mvnw``): a distribution
they cannot download."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _download(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # gradlew / mvnw on a machine without their distribution: "Downloading https://services.gradle.org/…",
    # then the JVM's network exception, with org.gradle.wrapper (org.apache.maven.wrapper) in its stack
    wrapper = next(
        (
            w
            for line in lines
            for w, package in (
                ("gradle", "org.gradle.wrapper"),
                ("maven", "org.apache.maven.wrapper"),
            )
            if package in line
        ),
        None,
    )
    if wrapper is None:
        return None
    url = next(
        (
            d["url"]
            for line in lines
            if (d := re.match(r"^Downloading (?P<url>https?://\S+)", line))
        ),
        "",
    )
    what = f" {url}" if url else ""
    return f"{wrapper} wrapper: cannot download its distribution{what} ({m['exc']}: {m['why'] or 'no detail'})"


TOOLS = (
    Tool(
        name="gradle/maven wrapper",
        faults=(
            Fault(
                r"^Exception in thread \"main\" (?P<exc>java\.net\.\w+|javax\.net\.ssl\.\w+)(?:: (?P<why>.*))?$",
                _download,
            ),
        ),
    ),
)
