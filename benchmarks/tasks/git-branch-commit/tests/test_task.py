"""Outcome checks for git-branch-commit."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
BRANCH = "fix/readme-typo"


def git(*args, check=True):
    proc = subprocess.run(["git", *args], cwd=WORKDIR, capture_output=True, text=True, timeout=30)
    if check:
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc


def root_commit():
    return git("rev-list", "--max-parents=0", "--all").stdout.split()[0]


def test_branch_exists():
    assert git("rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}", check=False).returncode == 0


def test_one_commit_on_top_of_the_start():
    assert git("rev-parse", f"refs/heads/{BRANCH}~1").stdout.strip() == root_commit()
    assert git("log", "-1", "--format=%s", f"refs/heads/{BRANCH}").stdout.strip() == "Fix typo in README"


def test_commit_fixes_readme_only():
    changed = git("diff", "--name-only", f"refs/heads/{BRANCH}~1", f"refs/heads/{BRANCH}").stdout.split()
    assert changed == ["README.md"]
    readme = git("show", f"refs/heads/{BRANCH}:README.md").stdout
    assert "recieve" not in readme
    assert readme.count("receive") == 2
    assert "python3 notify.py" in readme


def test_starting_branch_untouched():
    root = root_commit()
    heads = git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads").stdout.splitlines()
    others = [line.split() for line in heads if line.split()[0] != BRANCH]
    assert any(sha == root for _, sha in others), f"no other branch still at the initial commit: {others}"
