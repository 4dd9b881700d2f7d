"""agentcli's own copy of every checkpoint, outside the repository, where the sandbox cannot reach it.

The repository's `.git` is the sandbox's to write: `rm -rf .git`, `git update-ref -d` followed by
`gc`, or a checkpoint ref pointed elsewhere would leave `undo` nothing to trust. So each checkpoint
is also fetched into a bare repository in the repository's state folder (`paths.repo_state_dir`),
with the refs there were (branches, tags, the stash): its objects include the ignored files and
git's own settings the checkpoint keeps. `undo` reads checkpoints from here, and `recover` puts
objects and refs back into a repository that lost them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentcli.paths import repo_state_dir
from agentcli.repo.git import Git

MIRROR = "mirror.git"


def location(root: Path) -> Path:
    return repo_state_dir(root) / MIRROR


def repository(root: Path) -> Git | None:
    """The mirror of the repository at `root`, where one exists."""
    path = location(root)
    return Git(root, git_dir=path, work_tree=False) if (path / "HEAD").is_file() else None


def keep(git: Git, ref: str, commit: str) -> None:
    """Copy checkpoint `commit` (as `ref`) and the repository's refs into the mirror."""
    path = location(git.root)
    if not (path / "HEAD").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, capture_output=True)
    mirror = Git(git.root, git_dir=path, work_tree=False)
    # agentcli's refs in the repository are the sandbox's to rewrite: only the checkpoint just made is taken.
    mirror(
        "fetch",
        "-q",
        "--no-tags",
        "--no-write-fetch-head",
        str(git.common_dir),
        "+refs/*:refs/*",
        "^refs/agentcli/*",
        f"+{commit}:{ref}",
    )


def forget(root: Path, ref: str) -> None:
    """Drop a checkpoint from the mirror (after its undo)."""
    mirror = repository(root)
    if mirror is not None:
        mirror.try_("update-ref", "-d", ref)


def recover(root: Path, commit: str, head_ref: str | None) -> Git:
    """The repository at `root`, with `commit` and the refs of the mirror brought back where the
    sandbox destroyed them (`rm -rf .git`, refs deleted and garbage collected)."""
    dot = root / ".git"
    if not dot.exists():
        dot.mkdir()
    damaged = not (dot / "HEAD").is_file() if dot.is_dir() and not dot.is_symlink() else False
    git = Git(root, git_dir=dot) if dot.is_dir() and not dot.is_symlink() else Git(root)
    if damaged:
        git("init", "-q")
    if git.try_("cat-file", "-e", f"{commit}^{{commit}}") is not None:
        return git
    mirror = location(root)
    if not (mirror / "HEAD").is_file():
        return git
    # Refs the repository still has stay as they are; the rest, and every object, come back.
    have = set(git("for-each-ref", "--format=%(refname)").split())
    keep_refs = [f"^{ref}" for ref in have]
    fetch = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--update-head-ok"]
    git(*fetch, str(mirror), "+refs/*:refs/*", *keep_refs)
    if damaged and head_ref:
        git("symbolic-ref", "HEAD", head_ref)
    return git
