"""Seals on the records stepkit trusts later, so that a record a coder
forged or edited is never believed.

A sealed record is a file plus ``<file>.seal``: the HMAC-SHA256, under a
secret kept outside every project (``secret`` under
:func:`~stepkit.workspace.files.state_home`, created 0600 on first use), of
the file's bytes and of its name with its directory's name (so a record
cannot be passed off as another run's or another gate's).  Moving a project
keeps its seals valid; a coder, who cannot read the secret, cannot make one.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from stepkit.workspace.files import atomic_write, state_home

SEAL_SUFFIX = ".seal"


class SealBroken(Exception):
    """A record is not what stepkit wrote: its seal is missing or does not
    verify.  The message names the file."""

    def __init__(self, path: Path, why: str):
        super().__init__(f"forged or edited: {path} ({why})")
        self.path = path


def write_sealed(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (atomically), then its seal."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    atomic_write(path, payload)
    atomic_write(_seal_path(path), _mac(path, payload))


def read_sealed(path: Path) -> str:
    """The text of a sealed record.

    :raises FileNotFoundError: there is no record (a missing seal with it: never written).
    :raises SealBroken: the record is there and its seal is missing or does not verify.
    """
    payload = Path(path).read_bytes()
    try:
        seal = _seal_path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise SealBroken(path, "its seal is missing") from None
    if not hmac.compare_digest(seal, _mac(path, payload)):
        raise SealBroken(path, "its seal does not verify")
    return payload.decode("utf-8")


def adopt(path: Path) -> None:
    """Seal a record an earlier version of stepkit wrote without one (left
    as it is when it has a seal already)."""
    if not _seal_path(path).exists():
        with contextlib.suppress(OSError):
            atomic_write(_seal_path(path), _mac(path, Path(path).read_bytes()))


def discard(path: Path) -> None:
    """Remove a record and its seal."""
    for each in (Path(path), _seal_path(path)):
        with contextlib.suppress(FileNotFoundError):
            each.unlink()


def _seal_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + SEAL_SUFFIX)


def _mac(path: Path, payload: bytes) -> str:
    name = f"{Path(path).parent.name}/{Path(path).name}".encode("utf-8", "surrogateescape")
    return hmac.new(_secret(), name + b"\0" + payload, hashlib.sha256).hexdigest()


def _secret() -> bytes:
    """The sealing key, created (0600, whole or not at all) on first use."""
    path = state_home() / "secret"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".secret.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
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
