"""Outcome checks for git-tag-release."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
TAG = "v0.3.0"


def git(*args, check=True):
    proc = subprocess.run(["git", *args], cwd=WORKDIR, capture_output=True, text=True, timeout=30)
    if check:
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc


def test_tag_is_annotated():
    assert git("rev-parse", "--verify", "--quiet", f"refs/tags/{TAG}", check=False).returncode == 0, "no tag v0.3.0"
    assert git("cat-file", "-t", f"refs/tags/{TAG}").stdout.strip() == "tag", "v0.3.0 is a lightweight tag"


def test_tag_message():
    message = git("for-each-ref", "--format=%(contents)", f"refs/tags/{TAG}").stdout.strip()
    assert message.splitlines()[0].strip() == "Release 0.3.0"


def test_tag_points_at_the_release_commit():
    target = git("rev-parse", f"{TAG}^{{commit}}").stdout.strip()
    root = git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    head = git("rev-parse", "HEAD").stdout.strip()
    assert target in {root, head}
    assert 'version = "0.3.0"' in git("show", f"{target}:pyproject.toml").stdout
