"""The installed files of the tools the gates run (stepkit/workspace/installed.py):
the distributions a gate command uses and what they require, read through
their RECORD, every file in their packages; nothing else of site-packages."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stepkit.workspace import installed


def dist(site: Path, name: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(meta)
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    listed = [*files, f"{info.name}/METADATA", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in listed))


def site_with_runner(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    dist(site, "runner", {"runner/__init__.py": "", "runner/reports.py": "x = 1\n"}, ("helper>=1",))
    dist(site, "helper", {"helper.py": "y = 1\n"}, ('extra-only; extra == "dev"',))
    dist(site, "extra-only", {"extra_only.py": ""})
    dist(site, "unrelated", {"unrelated/__init__.py": ""})
    return site


def test_only_the_distributions_a_gate_uses_and_what_they_require_are_read(tmp_path):
    site = site_with_runner(tmp_path)
    found = installed.fingerprint([str(site)], ["python -m runner -q"])
    read = {Path(p).relative_to(site).parts[0] for p in found if p.startswith(str(site))}
    assert read == {"runner", "runner-1.0.dist-info", "helper.py", "helper-1.0.dist-info"}


def test_a_changed_or_added_module_of_the_runner_is_a_change(tmp_path):
    site = site_with_runner(tmp_path)
    before = installed.fingerprint([str(site)], ["runner"])
    (site / "runner" / "reports.py").write_text("x = 2\n")
    (site / "runner" / "extra.py").write_text("")
    (site / "runner" / "__pycache__").mkdir()
    (site / "runner" / "__pycache__" / "reports.cpython-311.pyc").write_bytes(b"\0")
    (site / "unrelated" / "new.py").write_text("")
    assert installed.changes(before, installed.fingerprint([str(site)], ["runner"])) == [
        f"{site / 'runner' / 'extra.py'} (added)",
        f"{site / 'runner' / 'reports.py'} (changed)",
    ]


def _counting_reads(monkeypatch) -> list[str]:
    """The paths the fingerprint reads (opens to hash) from now on."""
    read: list[str] = []

    def counted(path, *args, **kwargs):
        read.append(str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(installed, "open", counted, raising=False)
    return read


def test_a_file_unchanged_since_it_was_hashed_is_not_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(installed, "SETTLED_NS", 0)  # these files were written just now
    site = site_with_runner(tmp_path)
    first = installed.fingerprint([str(site)], ["runner"])
    read = _counting_reads(monkeypatch)
    assert installed.fingerprint([str(site)], ["runner"]) == first
    assert [p for p in read if p.startswith(str(site))] == []


def test_a_file_rewritten_to_its_size_and_old_modification_time_is_still_a_change(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(installed, "SETTLED_NS", 0)
    site = site_with_runner(tmp_path)
    reports = site / "runner" / "reports.py"
    before = installed.fingerprint([str(site)], ["runner"])
    was = reports.stat()
    reports.write_text("x = 9\n")  # the same size
    os.utime(reports, ns=(was.st_atime_ns, was.st_mtime_ns))  # the change time moves all the same
    assert installed.changes(before, installed.fingerprint([str(site)], ["runner"])) == [
        f"{reports} (changed)"
    ]


def test_a_file_changed_within_the_last_moments_is_read_at_every_fingerprint(tmp_path, monkeypatch):
    site = site_with_runner(tmp_path)  # written now: within SETTLED_NS
    installed.fingerprint([str(site)], ["runner"])
    read = _counting_reads(monkeypatch)
    installed.fingerprint([str(site)], ["runner"])
    assert str(site / "runner" / "reports.py") in read


def _next_process(monkeypatch) -> None:
    """This module as a new stepkit process finds it: no digest in memory."""
    monkeypatch.setattr(installed, "_DIGESTS", {})
    monkeypatch.setattr(installed, "_LOADED", set())


def test_the_next_process_reads_no_file_unchanged_since_an_earlier_one_hashed_it(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(installed, "SETTLED_NS", 0)
    site = site_with_runner(tmp_path)
    first = installed.fingerprint([str(site)], ["runner"])
    _next_process(monkeypatch)
    read = _counting_reads(monkeypatch)
    assert installed.fingerprint([str(site)], ["runner"]) == first
    assert [p for p in read if p.startswith(str(site))] == []


def test_a_file_rewritten_to_its_size_and_old_time_between_two_processes_is_a_change(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(installed, "SETTLED_NS", 0)
    site = site_with_runner(tmp_path)
    reports = site / "runner" / "reports.py"
    before = installed.fingerprint([str(site)], ["runner"])
    _next_process(monkeypatch)
    was = reports.stat()
    reports.write_text("x = 9\n")
    os.utime(reports, ns=(was.st_atime_ns, was.st_mtime_ns))
    assert installed.changes(before, installed.fingerprint([str(site)], ["runner"])) == [
        f"{reports} (changed)"
    ]


def test_a_kept_digest_edited_to_the_changed_files_identity_is_not_believed(tmp_path, monkeypatch):
    """The coder rewrites a runner file and the kept record with it, giving
    the new file's identity the old digest: the record's seal no longer
    verifies, so every file is hashed again."""
    monkeypatch.setattr(installed, "SETTLED_NS", 0)
    site = site_with_runner(tmp_path)
    reports = site / "runner" / "reports.py"
    before = installed.fingerprint([str(site)], ["runner"])
    reports.write_text("x = 9\n")
    record = installed._record_path([str(site)])
    kept = json.loads(record.read_text())
    st = reports.stat()
    identity = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    kept["digests"][str(reports)] = [*identity, before[str(reports)]]
    record.write_text(json.dumps(kept))
    _next_process(monkeypatch)
    assert installed.changes(before, installed.fingerprint([str(site)], ["runner"])) == [
        f"{reports} (changed)"
    ]
