"""Swift plugin: swift build; swift test only with a Tests/ directory; format/lint when configured."""

from stepkit.testing import resolve_gates

SWIFT = "stepkit.plugins.projects.swift"
PACKAGE = "// swift-tools-version:5.9\nimport PackageDescription\n"


def test_package_with_tests_and_tool_configs(stepkit_project):
    project = stepkit_project(
        {
            "Package.swift": PACKAGE,
            "Tests/DemoTests/DemoTests.swift": "",
            ".swift-format": "{}",
            ".swiftlint.yml": "disabled_rules: []\n",
        }
    )
    assert resolve_gates(project) == {
        "format": ("swift format --in-place {files:.swift}", SWIFT),
        "lint": ("swiftlint", SWIFT),
        "build": ("swift build", SWIFT),
        "tests": ("swift test", SWIFT),
    }


def test_package_without_tests(stepkit_project):
    project = stepkit_project({"Package.swift": PACKAGE, "Sources/Demo/main.swift": ""})
    gates = resolve_gates(project)
    assert gates["build"] == ("swift build", SWIFT)
    assert gates["tests"] == (None, None)
    assert gates["format"] == (None, None)
