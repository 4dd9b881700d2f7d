"""What agentcli keeps in a repository's refs (checkpoints, their index, ignored-files and git-settings
trees) hangs from the repository's own history: `git rev-list --max-parents=0 --all`, a common way to
find a repository's first commit, still finds only that."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agentcli.repo import checkpoint as cp
from tests.conftest import committed_repo
from tests.test_policy_switches import bash
from tests.test_solve import agentcli


def _roots(root: Path) -> list[str]:
    out = subprocess.run(["git", "rev-list", "--max-parents=0", "--all"], cwd=root, capture_output=True, text=True)
    return out.stdout.split()


def _commit(root: Path, rev: str = "HEAD") -> str:
    return subprocess.run(["git", "rev-parse", rev], cwd=root, capture_output=True, text=True).stdout.strip()


def test_a_checkpoint_adds_no_root_commit(tmp_path):
    root = committed_repo(tmp_path / "repo", {"README.md": "hello\n", ".gitignore": "*.log\n"})
    first = _commit(root)
    (root / "README.md").write_text("hello, world\n")
    (root / "run.log").write_text("ignored\n")
    subprocess.run(["git", "add", "README.md"], cwd=root, check=True)
    cp.create_checkpoint(root, "task")
    assert _roots(root) == [first]


def test_a_solved_task_leaves_the_first_commit_the_only_root(tmp_path):
    root = committed_repo(tmp_path / "repo", {"README.md": "recieve\n"})
    first = _commit(root)
    model = tmp_path / "replies.json"
    replies = [
        bash("git checkout -b fix && sed -i s/recieve/receive/ README.md && git commit -qam 'Fix typo' && git log"),
        "DONE: fixed on a branch.",
    ]
    model.write_text(json.dumps(replies))
    agentcli("solve", "Fix the typo on a branch.", "--model", f"scripted:{model}", "--sandbox", "host", cwd=root)
    assert _commit(root, "fix~1") == first
    assert _roots(root) == [first]
