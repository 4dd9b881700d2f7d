"""Outcome checks for fix-shell-quoting."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])


def make_source(root: Path) -> Path:
    src = root / "source files"
    src.mkdir()
    (src / "meeting notes.txt").write_text("agenda\n")
    (src / "a.txt").write_text("alpha\n")
    (src / "two  spaces.txt").write_text("beta\n")
    (src / "skip me.md").write_text("no\n")
    return src


def backup(src: Path, dest: Path):
    return subprocess.run(
        ["bash", str(WORKDIR / "backup.sh"), str(src), str(dest)],
        cwd=WORKDIR,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_names_with_spaces(tmp_path):
    src = make_source(tmp_path)
    dest = tmp_path / "back up" / "today"
    proc = backup(src, dest)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(p.name for p in dest.iterdir()) == [
        "a.txt.bak",
        "meeting notes.txt.bak",
        "two  spaces.txt.bak",
    ]
    assert (dest / "meeting notes.txt.bak").read_text() == "agenda\n"
    assert (dest / "two  spaces.txt.bak").read_text() == "beta\n"
    assert proc.stdout.strip() == "backed up 3 files"


def test_plain_names_still_work(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "x.txt").write_text("x\n")
    dest = tmp_path / "dest"
    proc = backup(src, dest)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [p.name for p in dest.iterdir()] == ["x.txt.bak"]


def test_usage_error_without_arguments():
    proc = subprocess.run(["bash", str(WORKDIR / "backup.sh")], cwd=WORKDIR, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
