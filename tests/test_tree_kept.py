"""What agentcli runs on its own leaves the work tree as it was: files put back, new ones removed,
ignored files never touched, and ownership given back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.repo import checkpoint as cp
from tests.conftest import git


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".gitignore").write_text(".env\nvenv/\n")
    (root / "a.txt").write_text("a\n")
    (root / ".env").write_text("SECRET=1\n")
    (root / "venv").mkdir()
    (root / "venv" / "lib.py").write_text("x = 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (root / "notes.txt").write_text("the user's own, uncommitted\n")
    return root


def test_a_command_that_deletes_and_writes_is_undone(tmp_path):
    root = _repo(tmp_path)
    with cp.tree_kept(root) as touched:
        subprocess.run("rm -f a.txt notes.txt && echo new > b.txt", shell=True, cwd=root, check=True)
    assert (root / "a.txt").read_text() == "a\n" and (root / "notes.txt").is_file()
    assert not (root / "b.txt").exists()
    assert touched == ["a.txt", "b.txt", "notes.txt"]


def test_ignored_files_survive_a_command_that_rewrites_the_ignore_rules(tmp_path):
    root = _repo(tmp_path)
    with cp.tree_kept(root) as touched:
        subprocess.run("rm .gitignore", shell=True, cwd=root, check=True)
    assert (root / ".env").read_text() == "SECRET=1\n" and (root / "venv" / "lib.py").is_file()
    assert (root / ".gitignore").read_text() == ".env\nvenv/\n"
    assert touched == [".gitignore"]


def test_nothing_changed_is_nothing_touched(tmp_path):
    root = _repo(tmp_path)
    with cp.tree_kept(root) as touched:
        subprocess.run("cat a.txt > /dev/null", shell=True, cwd=root, check=True)
    assert touched == []


def test_the_users_ignored_files_survive_a_command_that_moves_or_empties_their_folders(tmp_path):
    root = _repo(tmp_path)
    (root / ".gitignore").write_text(".env\nvenv/\n*.log\n")
    git(root, "commit", "-qam", "ignore logs")
    (root / "cfg").mkdir()
    (root / "cfg" / "notes.txt").write_text("untracked\n")
    (root / "cfg" / "secret.log").write_text("the user's log\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "src" / "pkg" / ".env").write_text("KEY=1\n")
    with cp.tree_kept(root):
        subprocess.run("rm cfg/notes.txt && mv src/pkg src/pkg2", shell=True, cwd=root, check=True)
    assert (root / "cfg" / "secret.log").read_text() == "the user's log\n"
    assert (root / "cfg" / "notes.txt").is_file() and (root / "src" / "pkg" / "mod.py").is_file()
    assert (root / "src" / "pkg2" / ".env").read_text() == "KEY=1\n"  # ignored: never removed


def test_a_tree_that_cannot_be_put_back_raises(tmp_path):
    root = _repo(tmp_path)
    with pytest.raises(cp.TreeNotPutBack, match="could not be put back"), cp.tree_kept(root):
        subprocess.run("rm -rf .git", shell=True, cwd=root, check=True)


def test_the_blocks_own_error_wins_over_a_failed_put_back(tmp_path):
    root = _repo(tmp_path)
    with pytest.raises(ValueError, match="the block's"), cp.tree_kept(root):
        subprocess.run("rm -rf .git", shell=True, cwd=root, check=True)
        raise ValueError("the block's")
