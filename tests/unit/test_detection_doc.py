"""docs/detection.md's agreement rate is the count of its real-projects table,
so the table cannot change without the closing line changing with it."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "detection.md"
VERDICTS = ("agree", "acceptable", "wrong")
GATES = ("format", "lint", "build", "tests")


def _rows() -> list[list[str]]:
    """The rows of the table under "## Real projects"."""
    text = DOC.read_text(encoding="utf-8").split("## Real projects", 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
    ]
    header, body = rows[0], rows[1:]
    assert header == ["project", "commit", "language", "gate", "stepkit", "CI", "verdict"]
    return body


def test_the_rate_line_matches_the_table():
    rows = _rows()
    right = sum(row[-1] in ("agree", "acceptable") for row in rows)
    text = DOC.read_text(encoding="utf-8").split("## Real projects", 1)[1].split("\n## ", 1)[0]
    rate = re.search(
        r"\*\*Agreement: (\d+) of (\d+) gates right or acceptable \((\d+) %\)\.\*\*", text
    )
    assert rate, "the closing rate line is missing"
    assert (int(rate[1]), int(rate[2]), int(rate[3])) == (
        right,
        len(rows),
        round(100 * right / len(rows)),
    )


def test_every_project_has_four_gates_a_commit_and_a_verdict():
    rows = _rows()
    assert all(row[-1] in VERDICTS for row in rows), [
        row for row in rows if row[-1] not in VERDICTS
    ]
    projects: dict[str, list[str]] = {}
    for row in rows:
        projects.setdefault(row[0], []).append(row[3])
        assert re.fullmatch(r"[0-9a-f]{12,40}", row[1]), row
    assert all(gates == list(GATES) for gates in projects.values()), projects
    assert len(projects) >= 10
    assert len({row[2].split()[0] for row in rows}) >= 7  # languages


def _verify_rows() -> tuple[list[list[str]], str]:
    """The rows of the table under "## verify against CI, run by hand", and the section."""
    text = DOC.read_text(encoding="utf-8").split("## verify against CI, run by hand", 1)[1]
    text = text.split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
    ]
    assert rows[0] == ["repo", "commit", "gate", "stepkit", "CI by hand", "agree"]
    return rows[1:], text


def test_the_verify_against_ci_rate_line_matches_its_table():
    """Each row's agreement is what its two verdicts say; the rate line counts them."""
    rows, text = _verify_rows()
    counted = 0
    for repo, commit, gate, mine, ci, agree in rows:
        assert re.fullmatch(r"[0-9a-f]{12}", commit) and gate in GATES, (repo, gate)
        said = agree.split(" (")[0]
        if ci == "—":
            assert said == "n/a", (repo, gate)
            continue
        verdict = (mine.split(" (")[0], ci.split(" (")[0])
        assert said == ("yes" if verdict[0] == verdict[1] else "no"), (repo, gate, verdict)
        counted += 1
    agreed = sum(row[-1].split(" (")[0] == "yes" for row in rows)
    rate = re.search(r"\*\*Agreement: (\d+) of (\d+) counted gates \((\d+) %\)", text)
    assert rate, "the closing rate line is missing"
    assert (int(rate[1]), int(rate[2]), int(rate[3])) == (
        agreed,
        counted,
        round(100 * agreed / counted),
    )
    assert len({row[0] for row in rows}) >= 10
