"""The Maven evidence parser: the first real ``[ERROR]`` cause instead of the
help links Maven prints after it, compiler errors, surefire's failing tests
and totals.  Real ``mvn`` runs offline in a tmp dir when this machine has it
and its local repository holds the plugins; the recorded output is Maven
3.8.7's (maven-compiler-plugin 3.13.0), recorded on this machine."""

from __future__ import annotations

import os
import shutil

import pytest

from stepkit.plugins.evidence import maven as parser
from stepkit.workspace.gates import run_gate
from tests.support.evidence_logs import condenser, evidence_pm

# real Maven builds (a JVM each): outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

parse = condenser(parser)

COMPILE_FAILURE = """\
[INFO] Scanning for projects...
[INFO] 
[INFO] -------------------------------< x:demo >-------------------------------
[INFO] Building demo 1.0
[INFO] --------------------------------[ jar ]---------------------------------
[INFO] 
[INFO] --- maven-resources-plugin:3.3.1:resources (default-resources) @ demo ---
[INFO] skip non existing resourceDirectory /home/dev/demo/src/main/resources
[INFO] 
[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ demo ---
[INFO] Recompiling the module because of changed source code.
[INFO] Compiling 1 source file with javac [debug release 17] to target/classes
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR : 
[INFO] -------------------------------------------------------------
[ERROR] /home/dev/demo/src/main/java/x/A.java:[1,46] incompatible types: java.lang.String cannot be converted to int
[INFO] 1 error
[INFO] -------------------------------------------------------------
[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
[INFO] Total time:  3.716 s
[INFO] Finished at: 2026-12-01T13:15:37Z
[INFO] ------------------------------------------------------------------------
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project demo: Compilation failure
[ERROR] /home/dev/demo/src/main/java/x/A.java:[1,46] incompatible types: java.lang.String cannot be converted to int
[ERROR] -> [Help 1]
[ERROR] 
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR] 
[ERROR] For more information about the errors and possible solutions, please read the following articles:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException
"""

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>demo</artifactId><version>1.0</version>
  <properties><maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies><dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId>
    <version>5.10.2</version><scope>test</scope></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
  </plugins></build>
</project>
"""
TEST = """package x;
import static org.junit.jupiter.api.Assertions.assertEquals;
import org.junit.jupiter.api.Test;
class CalcTest {
  @Test void adds() { assertEquals(5, Calc.add(2, 3)); }
  @Test void zero() { assertEquals(0, Calc.add(0, 0)); }
}
"""
HELP = ("-> [Help 1]", "Re-run Maven using the -X switch", "[Help 1] http")


def test_the_summary_is_the_compiler_error_not_the_help_links():
    text = parse("mvn -B compile", COMPILE_FAILURE)
    summary = text.rsplit("summary: ", 1)[1]
    assert summary == (
        "/home/dev/demo/src/main/java/x/A.java:[1,46] incompatible types: "
        "java.lang.String cannot be converted to int"
    )
    assert "maven-compiler-plugin:3.13.0:compile: Compilation failure" in text
    assert not any(noise in text for noise in HELP)


def test_other_output_is_not_claimed():
    assert parse("make check", "all good\n", 0) is None


@pytest.fixture
def mvn_project(tmp_path):
    if shutil.which("mvn") is None:
        pytest.skip("mvn is not installed on this machine")
    root = tmp_path / "demo"
    (root / "src/main/java/x").mkdir(parents=True)
    (root / "pom.xml").write_text(POM)
    return root


def mvn(root, goal):
    result = run_gate(
        "tests",
        f"mvn -B -o {goal}",
        None,
        root,
        root.parent / "logs",
        300,
        300,
        evidence_pm(),
        env=dict(os.environ),
    )
    if "in offline mode" in result.evidence or "could not be resolved" in result.evidence:
        pytest.skip(f"the local Maven repository lacks what this build needs: {result.summary}")
    return result


def test_real_maven_compile_failure_and_failing_test_keep_the_useful_line(mvn_project):
    source = mvn_project / "src/main/java/x/Calc.java"
    source.write_text(
        'package x; public class Calc { public static int add(int a, int b) { return "s"; } }\n'
    )
    compile_failure = mvn(mvn_project, "compile")
    assert compile_failure.status == "fail"
    assert compile_failure.summary.endswith(
        "Calc.java:[1,77] incompatible types: java.lang.String cannot be converted to int"
    )

    source.write_text(
        "package x; public class Calc { public static int add(int a, int b) { return a - b; } }\n"
    )
    (mvn_project / "src/test/java/x").mkdir(parents=True)
    (mvn_project / "src/test/java/x/CalcTest.java").write_text(TEST)
    failing = mvn(mvn_project, "test")
    assert (failing.status, failing.exit_code) == ("fail", 1)
    assert failing.summary == (
        "Tests run: 2, Failures: 1, Errors: 0, Skipped: 0; "
        "first: CalcTest.adds:5 expected: <5> but was: <-1>"
    )
    assert not any(noise in failing.summary for noise in HELP)


def test_real_maven_without_tests_is_not_run(mvn_project):
    (mvn_project / "src/main/java/x/Calc.java").write_text("package x; public class Calc {}\n")
    result = mvn(mvn_project, "test")
    assert (result.status, result.exit_code) == ("not_run", 0)
    assert result.summary.startswith("maven: no tests to run (exit 0); the command ran no test")
