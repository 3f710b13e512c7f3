"""The GitHub Actions workflow ``stepkit ci`` writes: the plan's ready steps
as jobs of the CI engine the project already has.

One job per ready step (a matrix entry each) runs ``stepkit run --worktree
--step N --json`` headless.  A run that pauses at a question is kept as an
artifact (the work tree with its git directory, which holds the run store,
and the step's worktree, packed with their absolute paths, which are the
same on every runner of the repository) and its question is asked on the
pull request.  A ``/stepkit approve|reject|answer RUN_ID …`` comment there
(or a manual run with ``run_id`` and ``answer``) starts another job that
restores it and runs ``stepkit resume RUN_ID --answer …``.  A paused run is
portable (its checkpoint keeps project paths relative); what must travel
beside it is the key that seals its records, which each job writes from
the ``STEPKIT_SEAL_KEY`` repository secret into its own
``$XDG_STATE_HOME/stepkit/secret`` (:mod:`stepkit.workspace.seal`), so the
artifact never holds it.

:func:`github_workflow` builds the workflow as data and has the YAML emitter
write it (:func:`stepkit.yamltext.dump_yaml`): a title, a path or the
stepkit source is a YAML value, which no text of theirs can end, and reaches
a ``run:`` script only through an environment variable.  The scripts are
constants.  Every string of it is made visible (:mod:`stepkit.shown`): a
title's escape sequence or bidi override is shown on GitHub as its text.
The question and the output the jobs post on the pull request come from
``--json``, visible already.  The command is :mod:`stepkit.cli.ci`; where the jobs install
stepkit from, :mod:`stepkit.cisource`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stepkit.shown import shown
from stepkit.yamltext import dump_yaml

#: Where the workflow goes, relative to the repository's root.
WORKFLOW_PATH = ".github/workflows/stepkit.yml"
#: The name of each paused run's artifact, before its run id.
ARTIFACT_PREFIX = "stepkit-run-"

#: What GitHub evaluates wherever it appears in a workflow's value.
EXPRESSION = "${{"

_HEADER = """\
# Written by `stepkit ci` (stepkit {version}) for the ready steps {steps} of the plan in PLANS_DIR.
# Run it from the Actions tab ("Run workflow", on your pull request's branch):
# one job per ready step runs `stepkit run --worktree --step N --json` headless.
# A run paused at a question is kept as an artifact and asks on the pull
# request; answer there with a comment (`/stepkit approve RUN_ID`, `/stepkit
# reject RUN_ID` or `/stepkit answer RUN_ID TEXT`), or run this workflow with
# run_id and answer, and another job resumes it. A completed step's branch
# (stepkit/NN-slug) is pushed; merge it in a clone where `stepkit merge-driver
# --register` ran, so that the branches' plan files merge.
# Repository secrets: ANTHROPIC_API_KEY (the engine; or set another in
# stepkit.toml) and STEPKIT_SEAL_KEY (`openssl rand -hex 32`), the key that
# seals a paused run's records so that another job can resume it.
# The jobs pip install STEPKIT_INSTALL (`stepkit ci --stepkit-source PATH|URL` sets it).
# Run `stepkit ci --force` again when the plan's ready steps change.
"""

_RUN_STEP = r"""set +e
stepkit run --worktree --step "$STEP" --project-dir "$PROJECT_DIR" --plans-dir "$PLANS_DIR" \
  --json > "$RUNNER_TEMP/stepkit-run.json"
echo "exit_code=$?" >> "$GITHUB_OUTPUT"
echo "run_id=$(jq -r '.run_id // empty' "$RUNNER_TEMP/stepkit-run.json")" >> "$GITHUB_OUTPUT"
"""

_SEAL_KEY = """\
if [ -z "$STEPKIT_SEAL_KEY" ]; then
  echo "::error::set the repository secret STEPKIT_SEAL_KEY (openssl rand -hex 32): \
it seals a paused run's records, so that another job can resume it"
  exit 1
fi
state="$RUNNER_TEMP/stepkit-state"
mkdir -p "$state/stepkit"
(umask 077 && printf '%s' "$STEPKIT_SEAL_KEY" > "$state/stepkit/secret")
echo "XDG_STATE_HOME=$state" >> "$GITHUB_ENV"
git config --global user.name "stepkit"
git config --global user.email "stepkit@users.noreply.github.com"
"""

_READ_ANSWER = r"""if [ -n "$COMMENT" ]; then
  read -r _ verb RUN_ID ANSWER <<< "$(printf '%s\n' "$COMMENT" | head -n 1 | tr -d '\r')"
  case "$verb" in
    approve|reject) ANSWER=$verb ;;
    answer) ;;
    *) echo "::error::unknown command /stepkit $verb (approve, reject or answer)"; exit 1 ;;
  esac
fi
if ! printf '%s' "$RUN_ID" | grep -Eq '^[0-9A-Za-z][0-9A-Za-z._-]*$'; then
  echo "::error::not a run id: '$RUN_ID'"; exit 1
fi
printf '%s' "$ANSWER" > "$RUNNER_TEMP/stepkit-answer.txt"
echo "run_id=$RUN_ID" >> "$GITHUB_OUTPUT"
"""

_FETCH = (
    r"""url=$(gh api "repos/$GITHUB_REPOSITORY/actions/artifacts?name="""
    + ARTIFACT_PREFIX
    + r"""$RUN_ID" \
  --jq '[.artifacts[] | select(.expired | not)] | sort_by(.created_at) | last | .archive_download_url // empty')
if [ -z "$url" ]; then echo "::error::no paused run $RUN_ID kept by this workflow"; exit 1; fi
gh api "$url" > "$RUNNER_TEMP/stepkit-run.zip"
unzip -o -q "$RUNNER_TEMP/stepkit-run.zip" -d "$RUNNER_TEMP"
"""
)

_RESUME = r"""set +e
stepkit resume "$RUN_ID" --answer "$(cat "$RUNNER_TEMP/stepkit-answer.txt")" \
  --project-dir "$PROJECT_DIR" --json > "$RUNNER_TEMP/stepkit-run.json"
echo "exit_code=$?" >> "$GITHUB_OUTPUT"
echo "run_id=$RUN_ID" >> "$GITHUB_OUTPUT"
"""

_KEEP = r"""worktree=$(jq -r '.worktree // empty' "$RUNNER_TEMP/stepkit-run.json")
tar -czPf "$RUNNER_TEMP/stepkit-run.tgz" "$GITHUB_WORKSPACE" ${worktree:+"$worktree"}
"""

_ASK = r"""run_id=$(jq -r '.run_id' "$RUNNER_TEMP/stepkit-run.json")
{
  jq -r '"stepkit: step \(.step) (\(.title)) is waiting at `\(.pending.node)`:\n\n\(.pending.question)\n\nOptions: \(.pending.options | join(", "))\n"' \
    "$RUNNER_TEMP/stepkit-run.json"
  echo "Answer with a comment: \`/stepkit approve $run_id\`, \`/stepkit reject $run_id\` or \`/stepkit answer $run_id TEXT\`."
} > "$RUNNER_TEMP/stepkit-question.md"
cat "$RUNNER_TEMP/stepkit-question.md" >> "$GITHUB_STEP_SUMMARY"
pr=${PR_NUMBER:-$(gh pr list --head "$GITHUB_REF_NAME" --state open --json number --jq '.[0].number // empty')}
if [ -n "$pr" ]; then gh pr comment "$pr" --body-file "$RUNNER_TEMP/stepkit-question.md"; fi
"""

_PUSH = r"""branch=$(jq -r '.branch' "$RUNNER_TEMP/stepkit-run.json")
git -C "$PROJECT_DIR" push "https://x-access-token:$GH_TOKEN@${GITHUB_SERVER_URL#https://}/$GITHUB_REPOSITORY.git" \
  "refs/heads/$branch:refs/heads/$branch"
echo "Step complete on \`$branch\`: merge it with \`git fetch origin $branch && git merge FETCH_HEAD\`." \
  >> "$GITHUB_STEP_SUMMARY"
"""

_FAIL = """\
jq -r '.output // empty' "$RUNNER_TEMP/stepkit-run.json" || true
exit "${EXIT_CODE:-1}"
"""

_RESUME_IF = (
    "(github.event_name == 'workflow_dispatch' && inputs.run_id != '') || "
    "(github.event_name == 'issue_comment' && github.event.issue.pull_request && "
    "startsWith(github.event.comment.body, '/stepkit ') && "
    """contains(fromJSON('["OWNER", "MEMBER", "COLLABORATOR"]'), """
    "github.event.comment.author_association))"
)

_PAUSED = "steps.run.outputs.exit_code == '5'"
_ANTHROPIC = {"ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"}
_SETUP_PYTHON = {"uses": "actions/setup-python@v5", "with": {"python-version": "3.12"}}
_INSTALL = {"name": "Install stepkit", "run": 'python -m pip install "$STEPKIT_INSTALL"'}
#: The seal key and a git identity for the step's commit.
_SETUP = {
    "name": "Set up the seal key and the git identity",
    "env": {"STEPKIT_SEAL_KEY": "${{ secrets.STEPKIT_SEAL_KEY }}"},
    "run": _SEAL_KEY,
}

#: What follows a run or a resume: keep and ask when paused, push when complete, else fail.
_AFTER: list[dict[str, Any]] = [
    {"name": "Keep the paused run", "if": _PAUSED, "run": _KEEP},
    {
        "uses": "actions/upload-artifact@v4",
        "if": _PAUSED,
        "with": {
            "name": ARTIFACT_PREFIX + "${{ steps.run.outputs.run_id }}",
            "path": "${{ runner.temp }}/stepkit-run.tgz",
            "retention-days": 30,
        },
    },
    {
        "name": "Ask on the pull request",
        "if": _PAUSED,
        "env": {
            "GH_TOKEN": "${{ github.token }}",
            "GH_REPO": "${{ github.repository }}",
            "PR_NUMBER": "${{ github.event.issue.number }}",
        },
        "run": _ASK,
    },
    {
        "name": "Push the step's branch",
        "if": "steps.run.outputs.exit_code == '0'",
        "env": {"GH_TOKEN": "${{ github.token }}"},
        "run": _PUSH,
    },
    {
        "name": "Fail unless complete or paused",
        "if": "steps.run.outputs.exit_code != '0' && steps.run.outputs.exit_code != '5'",
        "env": {"EXIT_CODE": "${{ steps.run.outputs.exit_code }}"},
        "run": _FAIL,
    },
]


def github_workflow(
    steps: Sequence[tuple[int, str]],
    plans_dir: str,
    install: str,
    project_dir: str = ".",
    version: str = "0",
) -> str:
    """The workflow's text for the ready ``steps`` ((number, title) pairs),
    the plan repo at ``plans_dir`` (relative to the project) and the project
    at ``project_dir`` (relative to the repository's root; both POSIX); the
    jobs ``pip install`` ``install``.  Raises ValueError for no step, or for
    a path or source GitHub would read an expression in."""
    if not steps:
        raise ValueError("a workflow needs at least one ready step")
    for what, value in (
        ("the plans dir", plans_dir),
        ("the project dir", project_dir),
        ("the stepkit source", install),
    ):
        if EXPRESSION in value:
            raise ValueError(
                f"{what} {value!r} holds {EXPRESSION!r}, which GitHub would evaluate as an "
                "expression"
            )
    header = _HEADER.format(version=version, steps=", ".join(str(number) for number, _ in steps))
    # what GitHub shows (a step's title in a job's name) is shown visibly
    return header + dump_yaml(shown(_workflow(steps, plans_dir, install, project_dir)))


def _workflow(
    steps: Sequence[tuple[int, str]], plans_dir: str, install: str, project_dir: str
) -> dict[str, Any]:
    """The workflow as data: two jobs, one per ready step and one that resumes."""
    step_job = {
        "name": "Step ${{ matrix.step }} (${{ matrix.title }})",
        "if": "github.event_name == 'workflow_dispatch' && inputs.run_id == ''",
        "runs-on": "ubuntu-latest",
        "strategy": {
            "fail-fast": False,
            "matrix": {
                "include": [{"step": number, "title": _inert(title)} for number, title in steps]
            },
        },
        "steps": [
            {
                "uses": "actions/checkout@v4",
                "with": {"fetch-depth": 0, "persist-credentials": False},
            },
            _SETUP_PYTHON,
            _INSTALL,
            _SETUP,
            {
                "name": "Run the step",
                "id": "run",
                "env": {"STEP": "${{ matrix.step }}", **_ANTHROPIC},
                "run": _RUN_STEP,
            },
            *_AFTER,
        ],
    }
    resume_job = {
        "name": "Resume a paused run",
        "if": _RESUME_IF,
        "runs-on": "ubuntu-latest",
        "steps": [
            _SETUP_PYTHON,
            _SETUP,
            {
                "name": "Read the answer",
                "id": "answer",
                "env": {
                    "COMMENT": "${{ github.event.comment.body }}",
                    "RUN_ID": "${{ inputs.run_id }}",
                    "ANSWER": "${{ inputs.answer }}",
                },
                "run": _READ_ANSWER,
            },
            {
                "name": "Fetch the paused run",
                "env": {
                    "GH_TOKEN": "${{ github.token }}",
                    "RUN_ID": "${{ steps.answer.outputs.run_id }}",
                },
                "run": _FETCH,
            },
            {"name": "Restore the paused run", "run": 'tar -xzPf "$RUNNER_TEMP/stepkit-run.tgz"'},
            # after the restore: a source in the repository is in the restored work tree
            _INSTALL,
            {
                "name": "Resume the run",
                "id": "run",
                "env": {"RUN_ID": "${{ steps.answer.outputs.run_id }}", **_ANTHROPIC},
                "run": _RESUME,
            },
            *_AFTER,
        ],
    }
    return {
        "name": "stepkit",
        "on": {
            "workflow_dispatch": {
                "inputs": {
                    "run_id": {
                        "description": "A paused run to resume (empty runs the ready steps)",
                        "required": False,
                        "default": "",
                    },
                    "answer": {
                        "description": "The answer to the paused run's question "
                        "(approve, reject or feedback)",
                        "required": False,
                        "default": "approve",
                    },
                }
            },
            "issue_comment": {"types": ["created"]},
        },
        "permissions": {"contents": "write", "pull-requests": "write", "actions": "read"},
        "env": {"STEPKIT_INSTALL": install, "PROJECT_DIR": project_dir, "PLANS_DIR": plans_dir},
        "jobs": {"step": step_job, "resume": resume_job},
    }


def _inert(title: str) -> str:
    """A title GitHub shows but does not read as an expression (``${{`` is broken up)."""
    return title.replace(EXPRESSION, "$ {{")
