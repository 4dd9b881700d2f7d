"""Outcome checks for fix-backup-retention-count."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])

DATES = ["2024-01-30", "2024-02-02", "2024-02-01", "2023-12-31", "2024-02-10", "2024-01-31"]
NEWEST_FIRST = sorted(DATES, reverse=True)


def make_dir(tmp_path: Path) -> Path:
    d = tmp_path / "my backups"
    d.mkdir()
    for date in DATES:
        (d / f"backup-{date}.tar.gz").write_text(date)
    (d / "notes.txt").write_text("keep me")
    return d


def prune(d: Path, keep: int):
    proc = subprocess.run(
        ["bash", str(WORKDIR / "prune_backups.sh"), str(d), str(keep)],
        cwd=WORKDIR,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return sorted(p.name for p in d.iterdir())


def expected(keep: int):
    return sorted([f"backup-{date}.tar.gz" for date in NEWEST_FIRST[:keep]] + ["notes.txt"])


def test_keeps_exactly_the_newest(tmp_path):
    d = make_dir(tmp_path)
    assert prune(d, 3) == expected(3)


def test_keep_one(tmp_path):
    d = make_dir(tmp_path)
    assert prune(d, 1) == expected(1)


def test_keep_more_than_there_are(tmp_path):
    d = make_dir(tmp_path)
    assert prune(d, 6) == expected(6)
    assert prune(d, 10) == expected(6)
