"""``stepkit verify`` on real projects against their CI's own commands run by
hand in the same environment.

For each project of :data:`REPOS` (projects of the detection table in
``docs/detection.md``, at the commits pinned in
``tests/fixtures/ci_unseen/README.md``): a clean checkout of the commit, the
project installed as its CI installs it, then ``stepkit verify --json`` and,
in the same checkout and environment, the CI's own command for each of the
four gates.  Each gate gets two verdicts — stepkit's (``pass``, ``fail``,
``env-fault``, ``NOT RUN``) and CI's by hand (``pass``, ``fail``,
``env-fault``; ``—`` when CI runs nothing for that gate) — and they agree
when they are the same.  A gate CI runs nothing for is listed, not counted.
verify runs with ``--all-files``, so its formatter checks the whole clean
checkout as CI's format job does.  A gate whose command is CI's own is run
once: CI's verdict by hand is read from that run's exit code and log.

The projects come from ``--repos DIR``: a directory holding, for each
``owner/name``, a git repository (bare or not) at ``DIR/owner+name`` or
``DIR/owner+name/repo`` that has the pinned commit.  A project whose
repository, commit or toolchain (:attr:`Repo.tools`) this machine lacks is
skipped with the reason.  Nothing is fetched from a code host: installs go to
the package registries, as CI's do.

``python tests/realrepos/verify_vs_ci.py --repos DIR [--only owner/name …] [--json FILE]``
prints a Markdown table (the one in ``docs/detection.md``) and the
agreement rate; ``STEPKIT_REALREPOS=DIR pytest -m realrepos tests/realrepos``
judges it (:mod:`tests.realrepos.test_verify_vs_ci`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES_README = ROOT / "tests" / "fixtures" / "ci_unseen" / "README.md"
GATES = ("format", "lint", "build", "tests")
#: One command's limit, seconds (a whole C++ build on 2 cores fits).
TIMEOUT = 1500
#: What in a failed command's output says the machine, not the code, stopped
#: it: a missing program, no route to a code host or registry, a toolchain
#: that cannot be installed here.
ENV_FAULT = re.compile(
    r"command not found|: not found$|No such file or directory.*(?:exec|spawn)"
    r"|Could not resolve host|Temporary failure in name resolution|Name or service not known"
    r"|getaddrinfo|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|Network is unreachable"
    r"|Failed to connect|failed to download|Failed to fetch|Connection refused"
    r"|No interpreter found for Python|InterpreterNotFound|Python interpreter .* not found"
    r"|could not find a version|is not installed in the project's environment"
    r"|Failed to resolve config dependency",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class Repo:
    """One project: how its CI installs it and its command per gate.

    :ivar name: ``owner/name``.
    :ivar install: CI's install steps, run in order in the checkout.
    :ivar ci: CI's command per gate (a gate CI runs nothing for is absent).
    :ivar tools: programs the comparison needs on PATH (missing: skipped).
    :ivar env: variables CI's jobs set for these steps.
    """

    name: str
    install: tuple[str, ...]
    ci: dict[str, str]
    tools: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


REPOS = (
    Repo(
        "python-poetry/tomlkit",
        ("poetry install",),
        {
            "format": "pre-commit run ruff-format --all-files",
            "lint": "pre-commit run ruff --all-files",
            "tests": "poetry run pytest -q tests",
        },
        ("poetry", "pre-commit"),
        {"POETRY_VIRTUALENVS_IN_PROJECT": "true"},
    ),
    Repo(
        "encode/starlette",
        ("scripts/install",),
        {
            "format": "venv/bin/ruff format --check --diff starlette tests",
            "lint": "venv/bin/ruff check starlette tests",
            "build": "venv/bin/mypy starlette tests",
            "tests": "scripts/test",
        },
        env={"GITHUB_ACTIONS": ""},
    ),
    Repo(
        "fastapi/typer",
        ("uv sync --no-dev --group tests",),
        {
            "format": "prek run ruff-format --all-files",
            "lint": "prek run ruff --all-files",
            "tests": "uv run bash scripts/test.sh",
        },
        ("uv", "prek"),
    ),
    Repo(
        "python-attrs/attrs",
        (),
        {
            "format": "uv run --only-group tox tox run -f lint",
            "lint": "uv run --only-group tox tox run -f lint",
            "build": "uv run --only-group tox tox run -f typing",
            "tests": "uv build --sdist --wheel && "
            "uv run --only-group tox tox run --installpkg dist/*.whl -e 3.11-tests",
        },
        ("uv",),
    ),
    Repo(
        "tox-dev/platformdirs",
        ("tox run -vv --notest --skip-missing-interpreters false -e 3.11",),
        {
            "format": "pre-commit run ruff-format --all-files",
            "lint": "pre-commit run ruff-check --all-files",
            "build": "tox run -e type",
            "tests": "tox run --skip-pkg-install -e 3.11",
        },
        ("tox", "pre-commit"),
    ),
    Repo(
        "pypa/packaging",
        (),
        {
            "format": "pipx run nox -s lint",
            "lint": "pipx run nox -s lint",
            "build": "pipx run nox -s lint",
            "tests": "pipx run nox -s tests",
        },
        ("pipx",),
        {"NOXFORCEPYTHON": "3.11"},
    ),
    Repo(
        "pmndrs/zustand",
        ("pnpm install --frozen-lockfile",),
        {
            "format": "pnpm run test:format",
            "lint": "pnpm run test:lint",
            "build": "pnpm run test:types && pnpm run build",
            "tests": "pnpm run test:spec",
        },
        ("pnpm",),
    ),
    Repo(
        "immerjs/immer",
        ("yarn install --frozen-lockfile",),
        {"tests": "yarn test"},
        ("yarn",),
    ),
    Repo(
        "unjs/ofetch",
        ("pnpm install --frozen-lockfile",),
        {
            "format": "pnpm lint",
            "lint": "pnpm lint",
            "build": "pnpm build",
            "tests": "pnpm vitest --coverage",
        },
        ("pnpm",),
    ),
    Repo(
        "leethomason/tinyxml2",
        (),
        {
            "build": "cmake -G Ninja -S . -B build-static-dbg -DCMAKE_BUILD_TYPE=Debug "
            "-DBUILD_SHARED_LIBS=OFF && cmake --build build-static-dbg",
            "tests": "cd build-static-dbg && ctest --output-on-failure",
        },
        ("cmake", "ninja"),
    ),
    Repo(
        "jarro2783/cxxopts",
        (),
        {
            "build": "mkdir -p build-ci && cd build-ci && cmake .. && make",
            "tests": "cd build-ci && ctest",
        },
        ("cmake", "make"),
    ),
    Repo(
        "fmtlib/fmt",
        (),
        {
            "build": "mkdir -p build-ci && cd build-ci && cmake .. -DCMAKE_BUILD_TYPE=Debug "
            "-DFMT_DOC=OFF -DFMT_PEDANTIC=ON -DFMT_WERROR=ON && cmake --build . -j 2",
            "tests": "cd build-ci && ctest -C Debug",
        },
        ("cmake",),
    ),
    Repo(
        "google/go-cmp",
        (),
        {"format": 'test -z "$(gofmt -d .)"', "tests": "go test -v -race ./..."},
    ),
    Repo(
        "dtolnay/thiserror",
        (),
        {
            "lint": "cargo clippy --tests -- -Dclippy::all -Dclippy::pedantic",
            "tests": "cargo test",
        },
        ("cargo",),
    ),
)


def pinned_commits(readme: Path = FIXTURES_README) -> dict[str, str]:
    """``owner/name`` → the commit the fixtures (and the detection table) pin."""
    found = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `[^`]+/` \| \[([^\]]+)\]\([^)]*\) \| ([0-9a-f]{40}) \|", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def source_of(repos_dir: Path, name: str) -> Path | None:
    """The git repository of ``name`` under ``repos_dir``, if there is one."""
    base = repos_dir / name.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def skip_reason(repo: Repo, source: Path | None, commit: str | None) -> str | None:
    """Why ``repo`` cannot be compared here (None: it can)."""
    if commit is None:
        return "no pinned commit in tests/fixtures/ci_unseen/README.md"
    if source is None:
        return "its repository is not under --repos"
    has = subprocess.run(
        ["git", f"--git-dir={_git_dir(source)}", "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if has.returncode != 0:
        return f"its repository lacks commit {commit[:12]}"
    missing = [t for t in repo.tools if shutil.which(t) is None]
    return f"not on PATH: {', '.join(missing)}" if missing else None


def _git_dir(source: Path) -> Path:
    return source / ".git" if (source / ".git").exists() else source


def checkout(source: Path, commit: str, into: Path) -> Path:
    """A clean clone of ``source`` at ``commit`` (its origin the source)."""
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "-q", commit], check=True)
    return into


def sh(command: str, cwd: Path, env: dict[str, str], log: Path) -> tuple[int, str]:
    """Run ``command`` in ``cwd``; its exit code (124 on timeout) and output."""
    try:
        done = subprocess.run(
            command,
            shell=True,
            check=False,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=TIMEOUT,
            executable="/bin/bash",
        )
        code, out = done.returncode, done.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        code, out = 124, (exc.stdout or b"").decode(errors="replace")
    log.write_text(f"$ {command}\n{out}\n[exit {code}]\n", encoding="utf-8")
    return code, out


def ci_verdict(code: int, output: str, tree: Path | None = None) -> str:
    """CI's verdict by hand: ``pass``, ``fail`` or ``env-fault`` (also when
    the output names a file of a submodule of ``tree`` that is not checked
    out: CI's checkout brings it, this machine cannot reach its host)."""
    if code == 0:
        return "pass"
    if code in (126, 127) or ENV_FAULT.search(output):
        return "env-fault"
    if tree is not None and any(f"{path}/" in output for path in _empty_submodules(tree)):
        return "env-fault"
    return "fail"


def _empty_submodules(tree: Path) -> list[str]:
    """The paths ``.gitmodules`` declares that are empty in ``tree``."""
    if not (tree / ".gitmodules").is_file():
        return []
    listed = subprocess.run(
        ["git", "config", "-f", ".gitmodules", "--get-regexp", r"\.path$"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    paths = [line.split(" ", 1)[1].strip() for line in listed.splitlines() if " " in line]
    return [p for p in paths if not (tree / p).is_dir() or not any((tree / p).iterdir())]


def stepkit_verdict(gate: dict) -> str:
    """stepkit's verdict on one gate of ``verify --json``."""
    return {"pass": "pass", "fail": "fail", "timeout": "fail", "error": "env-fault"}.get(
        gate["status"], "NOT RUN"
    )


def compare(repo: Repo, commit: str, source: Path, work: Path, stepkit: list[str]) -> dict:
    """Install, verify and run CI's commands by hand in one checkout of ``repo``.

    A checkout already in ``work`` whose installs finished (``installed.json``
    beside it, from an earlier comparison kept with ``--keep``) is reused as
    it is: installs are the slow part."""
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, **repo.env}
    done = work / "installed.json"
    if done.is_file():
        tree, installs = work / "tree", json.loads(done.read_text(encoding="utf-8"))
    else:
        tree = checkout(source, commit, work / "tree")
        installs = []
        for i, step in enumerate(repo.install):
            code, out = sh(step, tree, env, logs / f"install-{i}.log")
            installs.append({"command": step, "verdict": ci_verdict(code, out), "exit_code": code})
        done.write_text(json.dumps(installs), encoding="utf-8")
    verify = subprocess.run(
        # the formatter checks every file, as CI's format job does on its clean checkout
        [*stepkit, "verify", "--json", "--all-files"],
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=4 * TIMEOUT,
        check=False,
    )
    (logs / "verify.log").write_bytes(verify.stdout + verify.stderr)
    data = json.loads(verify.stdout) if verify.stdout.strip() else {"gates": [], "ok": None}
    by_gate = {g["name"]: g for g in data["gates"]}
    gates = []
    for gate in GATES:
        mine = by_gate.get(gate, {"status": "not_run", "command": None, "summary": ""})
        row = {
            "gate": gate,
            "stepkit": stepkit_verdict(mine),
            "stepkit_command": mine.get("command"),
            "stepkit_summary": mine.get("summary", ""),
            "ci_command": repo.ci.get(gate),
            "ci": "—",
        }
        if gate in repo.ci:
            code, out = _same_run(mine, repo.ci[gate]) or sh(
                repo.ci[gate], tree, env, logs / f"ci-{gate}.log"
            )
            row["ci"] = ci_verdict(code, out, tree)
            row["ci_exit_code"] = code
        row["agree"] = None if row["ci"] == "—" else row["stepkit"] == row["ci"]
        gates.append(row)
    return {
        "repo": repo.name,
        "commit": commit,
        "install": installs,
        "verify_exit_code": verify.returncode,
        "verify_ok": data.get("ok"),
        "gates": gates,
        "logs": str(logs),
    }


def _same_run(mine: dict, ci_command: str) -> tuple[int, str] | None:
    """stepkit's exit code and log of a gate whose command is CI's own, run
    in the same checkout and environment: judged by hand from that run (a
    test suite of many minutes is not run twice); None otherwise."""
    if mine.get("command") != ci_command or mine.get("exit_code") is None or not mine.get("log"):
        return None
    log = Path(mine["log"])
    return (mine["exit_code"], log.read_text(errors="replace")) if log.is_file() else None


def table(results: list[dict]) -> str:
    """The comparison as the Markdown table of ``docs/detection.md``."""
    lines = [
        "| repo | commit | gate | stepkit | CI by hand | agree |",
        "|---|---|---|---|---|---|",
    ]
    for result in results:
        if "skipped" in result:
            lines.append(f"| {result['repo']} | | | skipped: {result['skipped']} | | |")
            continue
        for row in result["gates"]:
            agree = {None: "n/a", True: "yes", False: "no"}[row["agree"]]
            lines.append(
                f"| {result['repo']} | {result['commit'][:12]} | {row['gate']} "
                f"| {row['stepkit']} | {row['ci']} | {agree} |"
            )
    counted = [
        r["agree"] for res in results for r in res.get("gates", ()) if r["agree"] is not None
    ]
    if counted:
        rate = sum(counted) / len(counted)
        lines.append(
            f"\n**Agreement: {sum(counted)} of {len(counted)} counted gates ({round(100 * rate)} %).**"
        )
    return "\n".join(lines)


def stepkit_command() -> list[str]:
    """``stepkit`` of this checkout, run by this interpreter."""
    return [sys.executable, "-m", "stepkit"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="where the repositories are")
    parser.add_argument("--only", action="append", help="owner/name (repeatable)")
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument("--keep", type=Path, help="keep checkouts and logs in this directory")
    args = parser.parse_args(argv)
    commits = pinned_commits()
    stepkit = stepkit_command()
    results = []
    for repo in REPOS:
        if args.only and repo.name not in args.only:
            continue
        source, commit = source_of(args.repos, repo.name), commits.get(repo.name)
        reason = skip_reason(repo, source, commit)
        if reason:
            results.append({"repo": repo.name, "skipped": reason})
            print(f"{repo.name}: skipped: {reason}", file=sys.stderr)
            continue
        base = args.keep or Path(tempfile.mkdtemp(prefix="verify-vs-ci-"))
        work = base / repo.name.replace("/", "+")
        work.mkdir(parents=True, exist_ok=True)
        print(f"{repo.name}: comparing in {work}", file=sys.stderr, flush=True)
        results.append(compare(repo, commit, source, work, stepkit))
        if args.json:
            args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
