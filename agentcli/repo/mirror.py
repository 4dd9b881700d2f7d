"""agentcli's own copy of every checkpoint, outside the repository, where the sandbox cannot reach it.

The repository's `.git` is the sandbox's to write: `rm -rf .git`, `git update-ref -d` followed by
`gc`, a deleted object, or a checkpoint ref pointed elsewhere would leave `undo` nothing to trust.
So each checkpoint is also pushed into a bare repository in the repository's state folder
(`paths.repo_state_dir`), with the refs there were (branches, tags, remotes, notes, the stash) under
a namespace of its own (`refs/agentcli/state/<checkpoint>/`): its objects include the staged tree,
the ignored files and git's own settings the checkpoint keeps. `undo` reads checkpoints from here,
and `recover` puts back into the repository whatever objects and refs it lost.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from agentcli.paths import repo_state_dir
from agentcli.repo.git import Git

MIRROR = "mirror.git"
STATE_REFS = "refs/agentcli/state"
# The kinds of refs a checkpoint keeps, each as `refs/<kind>/*`.
KEPT_REFS = ("heads", "tags", "remotes", "notes")


def location(root: Path) -> Path:
    return repo_state_dir(root) / MIRROR


def repository(root: Path) -> Git | None:
    """The mirror of the repository at `root`, where one exists."""
    path = location(root)
    return Git(root, git_dir=path, work_tree=False) if (path / "HEAD").is_file() else None


def keep(git: Git, name: str, ref: str, commit: str) -> None:
    """Push checkpoint `commit` (as `ref`) and the repository's refs (under the checkpoint's own
    namespace, so no later branch name ever clashes with them) into the mirror."""
    path = location(git.root)
    if not (path / "HEAD").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, capture_output=True)
        # A shallow clone's checkpoints carry its shallow boundary with them.
        subprocess.run(["git", "--git-dir", str(path), "config", "receive.shallowUpdate", "true"], check=True)
    specs = [f"+refs/{kind}/*:{STATE_REFS}/{name}/{kind}/*" for kind in KEPT_REFS]
    if git.try_("rev-parse", "-q", "--verify", "refs/stash") is not None:
        specs.append(f"+refs/stash:{STATE_REFS}/{name}/stash")
    # The checkpoint first, the refs after: a shallow clone's push of both at once is refused.
    git("push", "-q", "--no-verify", str(path), f"+{commit}:{ref}")
    git("push", "-q", "--no-verify", str(path), *specs)


def forget(root: Path, name: str, ref: str) -> None:
    """Drop a checkpoint, and the refs kept with it, from the mirror (after its undo)."""
    mirror = repository(root)
    if mirror is None:
        return
    mirror.try_("update-ref", "-d", ref)
    for kept in (mirror.try_("for-each-ref", "--format=%(refname)", f"{STATE_REFS}/{name}/") or "").split():
        mirror.try_("update-ref", "-d", kept)


def recover(root: Path, name: str, commit: str, head_ref: str | None) -> Git:
    """The repository at `root`, with what the sandbox destroyed brought back from the mirror: its
    `.git` folder (`rm -rf .git`), the refs it had at the checkpoint, and every object the checkpoint
    needs (deleted refs and `gc`, an object file removed)."""
    dot = root / ".git"
    if not dot.exists():
        dot.mkdir()
    if dot.is_symlink() or not dot.is_dir():
        return Git(root)  # a linked work tree: its git folder is elsewhere, out of the sandbox's reach
    _remove_special_files(dot)
    git = Git(root, git_dir=dot)
    damaged = not (dot / "HEAD").is_file()
    if damaged:
        git("init", "-q")
    mirror = repository(root)
    if mirror is None:
        return git
    if git.try_("cat-file", "-e", f"{commit}^{{commit}}") is None:
        # The checkpoint itself is gone (its refs deleted and collected, or all of .git): the refs
        # there were at the checkpoint come back with it.
        specs = [f"+{STATE_REFS}/{name}/{kind}/*:refs/{kind}/*" for kind in KEPT_REFS]
        fetch = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--update-head-ok", str(mirror.git_dir)]
        git(*fetch, *specs, f"+refs/agentcli/checkpoints/{name}:refs/agentcli/checkpoints/{name}")
    _copy_missing(git, mirror, commit)
    if damaged and head_ref:
        git("symbolic-ref", "HEAD", head_ref)
    return git


def _copy_missing(git: Git, mirror: Git, commit: str) -> None:
    """Copy from the mirror the objects the checkpoint reaches that the repository lacks."""
    listing = git("rev-list", "--objects", "--missing=print", "--no-object-names", commit)
    missing = [line[1:] for line in listing.split() if line.startswith("?")]
    if not missing:
        return
    pack = subprocess.run(
        ["git", "pack-objects", "--stdout", "-q"],
        input=("\n".join(missing) + "\n").encode(),
        capture_output=True,
        env=mirror.env,
        check=True,
    ).stdout
    subprocess.run(["git", "unpack-objects", "-q"], input=pack, capture_output=True, env=git.env, check=True)


def _remove_special_files(folder: Path) -> None:
    """FIFOs, sockets and devices the sandbox left in the git folder (git would block on a FIFO)."""
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(parent, name)
            mode = path.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                path.unlink()
