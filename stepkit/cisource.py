"""Where the jobs of the workflow ``stepkit ci`` writes install stepkit
from: a source that exists, never a version pin no index may serve (a
package published later under that name would run with the repository's
secrets).

Named by the user (``--stepkit-source``): a path in the repository, which
the job builds (``pip install ./PATH``), or a URL or requirement as given.
Else the source of the stepkit running here, as its installer recorded it
(PEP 610 ``direct_url.json``): a git commit reached over https, a wheel's
https URL with its hash, or a directory in the repository.  Anything else
(an index, a local directory outside the repository, a ``file:`` URL) is
refused with the choices: the jobs could not install the same stepkit.
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote, urlsplit

from stepkit.errors import UsageError

_CHOICES = (
    "name what the jobs pip install with --stepkit-source PATH (stepkit's source in this "
    "repository, built in the job), --stepkit-source URL (git+https://…@COMMIT, a wheel's "
    "https URL) or --stepkit-source REQUIREMENT that your runners' index serves; nothing "
    "was written"
)


def stepkit_source(named: str | None, root: Path) -> str:
    """The ``pip install`` argument of the jobs of the repository at ``root``:
    ``named`` (a path is relative to the current directory) or the source of
    the installed stepkit.  Raises UsageError when the jobs could not install
    from it."""
    if named is not None:
        return _named(named, root)
    try:
        dist = metadata.distribution("stepkit")
    except metadata.PackageNotFoundError:
        _refuse("this stepkit runs from a source tree no installer recorded")
    recorded = dist.read_text("direct_url.json")
    if recorded is None:  # what an install from a package index leaves: which index is not kept
        _refuse(f"stepkit {dist.version} has no record of where it was installed from")
    return recorded_source(json.loads(recorded), root)


def _named(named: str, root: Path) -> str:
    if "://" in named:
        return named
    path = Path(named)
    if path.exists():
        return _in_repository(path, root)
    if "/" in named or os.sep in named:
        raise UsageError(f"--stepkit-source {named}: no such path (nothing was written)")
    return named


def recorded_source(direct_url: dict, root: Path) -> str:
    """The requirement a PEP 610 record gives, the same stepkit on a runner
    of the repository at ``root``; raises UsageError when there is none."""
    url = str(direct_url.get("url", ""))
    parts = urlsplit(url)
    if parts.scheme == "file" and "dir_info" in direct_url:
        return _in_repository(Path(unquote(parts.path)), root)
    if parts.scheme != "https" or "@" in parts.netloc:
        _refuse(f"stepkit was installed from {_shown(url)}, which the jobs cannot reach")
    if "vcs_info" in direct_url:
        vcs = direct_url["vcs_info"]
        if vcs.get("vcs") != "git":
            _refuse(f"stepkit was installed from {vcs.get('vcs')} {url}, not git")
        subdirectory = direct_url.get("subdirectory")
        fragment = f"#subdirectory={subdirectory}" if subdirectory else ""
        return f"stepkit @ git+{url}@{vcs['commit_id']}{fragment}"
    if "archive_info" in direct_url:
        archive = direct_url["archive_info"]
        hashes = archive.get("hashes") or {}
        digest = f"sha256={hashes['sha256']}" if "sha256" in hashes else archive.get("hash", "")
        return f"stepkit @ {url}" + (f"#{digest}" if digest else "")
    _refuse(f"stepkit was installed from {url}, which the jobs cannot install")


def _in_repository(path: Path, root: Path) -> str:
    """``./PATH`` relative to ``root``, which the job's ``pip`` reads as a path."""
    resolved, top = path.resolve(), root.resolve()
    if not resolved.is_relative_to(top):
        _refuse(f"stepkit's source {resolved} is not in the repository {top}")
    relative = resolved.relative_to(top).as_posix()
    return "." if relative == "." else f"./{relative}"


def _shown(url: str) -> str:
    """``url`` without the user and password it may carry."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _refuse(why: str) -> NoReturn:
    raise UsageError(f"{why}; {_CHOICES}")
