"""The work tree's snapshot sees every change, whatever the sandbox-written `.git/index` says about it."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from agentcli.repo.checkpoint import snapshot_tree
from agentcli.repo.git import Git
from tests.conftest import GIT_ENV, git


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\n")
    (root / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 2\n")
    (root / "kept.log").write_text("tracked though ignored\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "add", "-f", "kept.log")
    git(root, "commit", "-qm", "init")
    return root


def _files(root: Path, tree: str) -> dict[str, str]:
    listing = git(root, "ls-tree", "-r", tree)
    return {line.split("\t")[1]: git(root, "cat-file", "-p", line.split()[2]).strip() for line in listing.splitlines()}


def test_untracked_files_are_in_it_ignored_ones_not_and_excluded_paths_keep_their_old_content(tmp_path: Path):
    root = _repo(tmp_path)
    (root / "new.py").write_text("z = 3\n")
    (root / "run.log").write_text("ignored\n")
    (root / "kept.log").write_text("changed\n")
    (root / "b.py").unlink()
    (root / "a.py").write_text("x = 10\n")
    files = _files(root, snapshot_tree(Git(root), ("a.py",)))
    assert files == {".gitignore": "*.log", "a.py": "x = 1", "kept.log": "changed", "new.py": "z = 3"}
    assert _files(root, snapshot_tree(Git(root)))["a.py"] == "x = 10"


def test_files_flagged_unchanged_in_the_index_are_read_all_the_same(tmp_path: Path):
    root = _repo(tmp_path)
    snapshot_tree(Git(root))  # agentcli's own index holds the files' stat data from here
    git(root, "update-index", "--assume-unchanged", "a.py")
    git(root, "update-index", "--skip-worktree", "b.py")
    (root / "a.py").write_text("x = 'changed'\n")
    (root / "b.py").write_text("y = 'changed'\n")
    assert git(root, "status", "--porcelain") == ""
    files = _files(root, snapshot_tree(Git(root)))
    assert files["a.py"] == "x = 'changed'" and files["b.py"] == "y = 'changed'"


def test_an_index_forged_with_a_changed_files_stat_data_hides_nothing(tmp_path: Path):
    root = _repo(tmp_path)
    snapshot_tree(Git(root))
    committed = bytes.fromhex(git(root, "rev-parse", "HEAD:a.py").strip())
    (root / "a.py").write_text("x = 9\n")
    os.utime(root / "a.py", (1_000_000_000, 1_000_000_000))  # long before the index: not "racily clean"
    git(root, "add", "a.py")
    changed = bytes.fromhex(git(root, "rev-parse", ":a.py").strip())
    index = root / ".git" / "index"
    data = index.read_bytes()[:-20].replace(changed, committed)
    index.write_bytes(data + hashlib.sha1(data).digest())
    assert git(root, "status", "--porcelain") == ""
    assert _files(root, snapshot_tree(Git(root)))["a.py"] == "x = 9"


def test_a_change_of_the_same_size_with_its_time_put_back_is_seen(tmp_path: Path):
    root = _repo(tmp_path)
    before = snapshot_tree(Git(root))
    was = (root / "a.py").stat()
    with open(root / "a.py", "r+") as f:  # the same inode, the same size
        f.write("x = 7\n")
    os.utime(root / "a.py", ns=(was.st_atime_ns, was.st_mtime_ns))
    after = snapshot_tree(Git(root))
    assert after != before and _files(root, after)["a.py"] == "x = 7"


def test_a_conflicted_index_gives_the_files_as_they_are(tmp_path: Path):
    root = _repo(tmp_path)
    git(root, "checkout", "-qb", "other")
    (root / "a.py").write_text("x = 'other'\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "-")
    (root / "a.py").write_text("x = 'main'\n")
    git(root, "commit", "-qam", "main")
    subprocess.run(["git", "merge", "-q", "other"], cwd=root, capture_output=True, env={**os.environ, **GIT_ENV})
    assert "UU a.py" in git(root, "status", "--porcelain")
    assert "<<<<<<<" in _files(root, snapshot_tree(Git(root)))["a.py"]
