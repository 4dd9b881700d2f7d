"""Outcome checks for git-untrack-file."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
LOG = """DEBUG:root:would resize holiday/beach.jpg
DEBUG:root:would resize holiday/sunset.jpg
DEBUG:root:would resize profile.png
"""


def git(*args):
    proc = subprocess.run(["git", *args], cwd=WORKDIR, capture_output=True, text=True, timeout=30)
    return proc


def test_log_not_tracked_in_last_commit():
    files = git("ls-tree", "-r", "--name-only", "HEAD").stdout.split()
    assert "debug.log" not in files
    assert {"app.py", "README.md", ".gitignore"} <= set(files)


def test_log_not_in_index():
    assert "debug.log" not in git("ls-files").stdout.split()


def test_log_kept_on_disk():
    # Running app.py appends to the log, which is fine.
    assert (WORKDIR / "debug.log").read_text().startswith(LOG)


def test_log_ignored_by_committed_gitignore():
    committed = git("show", "HEAD:.gitignore").stdout
    assert "__pycache__/" in committed.split()
    assert "*.pyc" in committed.split()
    assert git("check-ignore", "-q", "--no-index", "debug.log").returncode == 0


def test_committed_and_clean_tree():
    assert int(git("rev-list", "--count", "HEAD").stdout.strip()) >= 2
    assert git("status", "--porcelain").stdout.strip() == ""
