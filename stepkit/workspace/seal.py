"""Seals on the records stepkit trusts later, so that a record a coder
forged or edited is never believed.

A sealed record is a JSON object whose last member, ``seal``, is the
HMAC-SHA256, under a secret kept outside every project (``secret`` under
:func:`~stepkit.workspace.files.state_home`, created 0600 on first use), of
the rest of its text and of its name with its directory's name (so a record
cannot be passed off as another run's or another gate's).  Record and seal
are one file, replaced in one rename: a crash never leaves them apart.  Moving a project
keeps its seals valid; a coder, who cannot read the secret, cannot make one.

A large part of a record that is rewritten often (the run's checkpoint) is
kept apart (:class:`Apart`): written once as a sealed record of its own
beside it (:func:`write_apart`), the record holding in its place a
reference with the part's sha256 (:func:`read_apart` believes the part only
when its seal verifies and its digest is the one the record names).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.files import atomic_write, state_home

#: The seal as the sealed JSON object's last member.
_SEAL = lazy_compile(r',?\s*"seal":\s*"(?P<mac>[0-9a-f]{64})"\s*\}\s*$')
#: Characters at the end of a record that hold its seal as :func:`_sealed`
#: writes it (``,"seal":"<64 hex>"}``, 76), with room to spare: only they are
#: searched, not the whole record (a checkpoint is hundreds of KB).
_SEAL_TAIL = 128


class SealBroken(Exception):
    """A record is not what stepkit wrote: its seal is missing or does not
    verify.  The message names the file."""

    def __init__(self, path: Path, why: str):
        super().__init__(f"forged or edited: {path} ({why})")
        self.path = path


def write_sealed(path: Path, text: str, durable: bool = True) -> None:
    """Write the JSON object ``text`` to ``path`` (atomically), sealed: the
    seal is its last member, so record and seal are replaced together;
    ``durable``: see :func:`~stepkit.workspace.files.atomic_write`."""
    atomic_write(path, _sealed(path, text), durable=durable)


def read_sealed(path: Path) -> str:
    """The text of a sealed record, as it was given to :func:`write_sealed`.

    :raises FileNotFoundError: there is no record.
    :raises SealBroken: the record has no seal, or its seal does not verify.
    """
    text = Path(path).read_bytes().decode("utf-8")
    found = _SEAL.search(text, max(0, len(text.rstrip()) - _SEAL_TAIL))
    if found is None:
        raise SealBroken(path, "it has no seal")
    body = text[: found.start()] + "}"
    if not hmac.compare_digest(found["mac"], _mac(path, body)):
        raise SealBroken(path, "its seal does not verify")
    return body


def adopt(path: Path) -> None:
    """Seal a record an earlier version of stepkit wrote without one."""
    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
        text = Path(path).read_bytes().decode("utf-8")
        if _SEAL.search(text) is None:
            atomic_write(path, _sealed(path, text))


class Apart(dict[str, Any]):
    """A JSON object that the sealed record holding it keeps apart: written
    once beside the record, the record saved with a reference in its place
    (:func:`write_apart`).  Never changed once made: a record that needs
    another value is given a new one.

    :ivar reference: the reference the record holds in its place, once written or read.
    """

    reference: dict[str, str] | None = None


#: The member of a reference that names the part's file.
APART = "sealed_apart"
#: What a part's file may be named: one file beside the record, never a path.
_PART_NAME = lazy_compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.json")


def write_apart(path: Path, text: str, durable: bool = True) -> dict[str, str]:
    """Write the JSON object ``text`` sealed at ``path`` (:func:`write_sealed`);
    the reference a record holds in its place: the file's name and the sha256
    of ``text``."""
    write_sealed(path, text, durable=durable)
    return {APART: Path(path).name, "sha256": _digest(text.rstrip())}  # as read_sealed gives it


def is_apart(value: object) -> bool:
    """``value`` is a reference :func:`write_apart` returned (as a record holds it)."""
    return isinstance(value, dict) and set(value) == {APART, "sha256"}


def read_apart(directory: Path, reference: dict[str, str]) -> str:
    """The text of the part ``reference`` names, in ``directory`` (the record's).

    :raises FileNotFoundError: the part is not there.
    :raises SealBroken: the reference is not one stepkit writes, the part's
        seal does not verify, or it is not the part the reference names (its digest).
    """
    name = reference.get(APART, "")
    path = Path(directory) / name
    if not (isinstance(name, str) and _PART_NAME.fullmatch(name)):
        raise SealBroken(path, "its reference names no file beside the record")
    text = read_sealed(path)
    if not hmac.compare_digest(str(reference.get("sha256", "")), _digest(text)):
        raise SealBroken(path, "it is not the part the record names")
    return text


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _sealed(path: Path, text: str) -> str:
    body = text.rstrip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(f"{path}: only a JSON object is sealed")
    separator = "," if body[1:-1].strip() else ""
    return f'{body[:-1]}{separator}"seal":"{_mac(path, body)}"}}'


def _mac(path: Path, body: str) -> str:
    name = f"{Path(path).parent.name}/{Path(path).name}"
    message = f"{name}\0{body}".encode("utf-8", "surrogateescape")
    return hmac.new(_secret(), message, hashlib.sha256).hexdigest()


def _secret() -> bytes:
    """The sealing key, created (0600, whole or not at all) on first use;
    callers that make it at once, in other processes or in threads of this
    one, each write a temporary file of their own and all read the key the
    first link put in place."""
    path = state_home() / "secret"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    # only here: a verify's head start reads a seal before anything else imports
    import secrets
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".secret.{os.getpid()}-", suffix=".tmp")
    try:
        os.write(fd, secrets.token_hex(32).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)  # never replaces a secret another process made first
    except FileExistsError:
        pass
    finally:
        os.unlink(temp)
    return path.read_bytes()
