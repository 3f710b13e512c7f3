"""The installed files of the tools the gates run (stepkit/workspace/installed.py):
the distributions a gate command uses and what they require, read through
their RECORD, every file in their packages; nothing else of site-packages."""

from __future__ import annotations

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
