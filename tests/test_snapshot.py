"""The work tree's snapshot sees every change, whatever the sandbox-written `.git/index` says about it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.repo import checkpoint as cp
from agentcli.repo.checkpoint import snapshot_tree
from agentcli.repo.git import Git
from tests.conftest import GIT_ENV, committed_repo, git


def _repo(tmp_path: Path) -> Path:
    """a.py, b.py, and kept.log, tracked though `.gitignore` (committed after it) ignores it."""
    root = committed_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 2\n", "kept.log": "tracked\n"})
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-qm", "ignore logs")
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


@pytest.mark.parametrize(
    "setting", ["core.ignoreStat=true", "core.trustCtime=false", "core.checkStat=minimal", "core.splitIndex=true"]
)
def test_settings_that_weaken_gits_checks_are_not_taken(tmp_path: Path, setting: str):
    root = _repo(tmp_path)
    git(root, "config", *setting.split("="))
    snapshot_tree(Git(root))
    with open(root / "a.py", "r+") as f:  # the same size, the time put back
        f.write("x = 8\n")
    os.utime(root / "a.py", (1_000_000_000, 1_000_000_000))
    snapshot_tree(Git(root))
    os.utime(root / "a.py", (1_000_000_000, 1_000_000_000))
    assert _files(root, snapshot_tree(Git(root)))["a.py"] == "x = 8"
    assert not list((root / ".git").glob("sharedindex.*"))


def test_a_file_changed_again_in_the_second_it_was_read_is_read_again(tmp_path: Path):
    root = _repo(tmp_path)

    def write(text: str) -> None:
        with open(root / "a.py", "r+") as f:
            f.write(text)
        os.utime(root / "a.py", (1_000_000_000, 1_000_000_000))

    start = snapshot_tree(Git(root))
    time.sleep(1.05 - time.time() % 1)  # early in a second: the next three steps share it
    write("x = 2\n")
    snapshot_tree(Git(root))  # the stat data taken in the second a.py changed
    write("x = 9\n")  # the same size, the same mtime, a ctime git compares to the second only
    after = snapshot_tree(Git(root))
    assert after != start and _files(root, after)["a.py"] == "x = 9"


def test_objects_only_agentclis_index_named_may_be_pruned(tmp_path: Path):
    root = _repo(tmp_path)
    (root / "a.py").write_text("x = 'edited'\n")
    snapshot_tree(Git(root))
    git(root, "gc", "-q", "--prune=now")
    assert _files(root, snapshot_tree(Git(root)))["a.py"] == "x = 'edited'"


def test_an_excluded_path_keeps_the_users_blob_as_it_changes(tmp_path: Path):
    root = _repo(tmp_path)
    (root / "a.py").write_text("x = 'ours'\n")
    assert _files(root, snapshot_tree(Git(root), ("a.py",)))["a.py"] == "x = 1"
    git(root, "add", "a.py")
    (root / "a.py").write_text("x = 'ours again'\n")
    assert _files(root, snapshot_tree(Git(root), ("a.py",)))["a.py"] == "x = 'ours'"


def test_an_unreadable_index_tracks_nothing_and_restore_brings_the_checkpoints_back(tmp_path: Path):
    root = _repo(tmp_path)
    checkpoint = cp.create_checkpoint(root, "s1")
    (root / "a.py").write_text("x = 'edited'\n")
    (root / ".git" / "index").write_bytes(b"garbage")
    files = _files(root, snapshot_tree(Git(root)))
    assert files["a.py"] == "x = 'edited'" and "kept.log" not in files  # ignored, once nothing tracks it
    cp.restore(root, checkpoint)
    assert (root / "a.py").read_text() == "x = 1\n" and git(root, "status", "--porcelain") == ""


def test_a_nested_repository_with_no_commit_is_in_it_and_put_back_with_the_rest(tmp_path: Path):
    root = _repo(tmp_path)
    checkpoint = cp.create_checkpoint(root, "s1")
    (root / "sub").mkdir()
    (root / "sub" / "f").write_text("x\n")
    git(root / "sub", "init", "-q")
    (root / "a.py").write_text("x = 'edited'\n")
    assert "160000 commit" in git(root, "ls-tree", snapshot_tree(Git(root)), "sub")
    assert cp.nested_repositories_added(root, checkpoint) == ["sub"]
    cp.restore(root, checkpoint)
    assert not (root / "sub").exists() and git(root, "status", "--porcelain") == ""


def test_a_tracked_file_replaced_by_a_nested_repository_is_that_repository(tmp_path: Path):
    root = _repo(tmp_path)
    checkpoint = cp.create_checkpoint(root, "s1")
    (root / "b.py").unlink()
    (root / "b.py").mkdir()
    (root / "b.py" / "f").write_text("x\n")
    git(root / "b.py", "init", "-q")
    assert cp.nested_repositories_added(root, checkpoint) == ["b.py"]
    cp.restore(root, checkpoint)
    assert (root / "b.py").read_text() == "y = 2\n" and git(root, "status", "--porcelain") == ""


def test_a_tracked_nested_repository_is_its_commit_as_it_moves(tmp_path: Path):
    root = _repo(tmp_path)
    inner = committed_repo(root / "lib", {"f": "one\n"})
    git(root, "add", "lib")
    git(root, "commit", "-qm", "lib")
    snapshot_tree(Git(root))
    (inner / "f").write_text("two\n")
    git(inner, "commit", "-qam", "two")
    entry = git(root, "ls-tree", snapshot_tree(Git(root)), "lib").split()
    assert entry[:2] == ["160000", "commit"] and entry[2] == git(inner, "rev-parse", "HEAD").strip()


def test_changed_paths_name_files_as_they_are_whatever_their_letters(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    checkpoint = cp.create_checkpoint(repo, "task")
    (repo / "a.py").write_text("x = 2\n")
    for name in ("héllo wörld.sh", 'say "hi".sh', "tab\there.sh"):
        (repo / name).write_text("echo\n")
    (repo / os.fsdecode(b"caf\xe9.sh")).write_text("echo\n")  # no UTF-8: no check could name it
    assert set(cp.changed_paths(repo, checkpoint)) == {
        ("A", 'say "hi".sh'),
        ("A", "tab\there.sh"),
        ("A", "héllo wörld.sh"),
        ("M", "a.py"),
    }


def test_a_file_named_with_a_carriage_return_is_in_the_checkpoint_and_comes_back(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "notes\r.txt").write_text("the user's work\n")
    checkpoint = cp.create_checkpoint(repo, "task")
    (repo / "notes\r.txt").write_text("changed\n")
    (repo / "made\rby task.txt").write_text("new\n")
    assert set(cp.changed_paths(repo, checkpoint)) == {("M", "notes\r.txt"), ("A", "made\rby task.txt")}
    cp.restore(repo, checkpoint)
    assert (repo / "notes\r.txt").read_text() == "the user's work\n"
    assert not (repo / "made\rby task.txt").exists()
