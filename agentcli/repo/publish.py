"""Deliver a run's change: as a commit on its own branch, as a patch file, or both.

The change is the difference between the checkpoint (the user's state before the run, uncommitted
work included) and the working tree after it. The branch commit applies only that difference on
top of the commit HEAD pointed at, so the user's own uncommitted work never enters it. Works on
detached HEADs and shallow clones: nothing here needs history beyond HEAD itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.errors import UsageError
from agentcli.repo.checkpoint import Checkpoint, diff_since, fallback_identity, scratch_index
from agentcli.repo.git import Git


@dataclass
class Delivery:
    """What the user asked to be done with the change."""

    branch: str | None = None  # "" or None: no branch; "auto": agentcli/<slug of the task>
    commit_message: str | None = None
    patch_path: Path | None = None
    apply: bool = True  # keep the change in the working tree


def slug(text: str, limit: int = 40) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "change"


def branch_name(git: Git, requested: str, task: str) -> str:
    """The branch to commit to: the requested name, or a fresh `agentcli/<slug>` for "auto"."""
    if requested != "auto":
        if not _valid_branch(git, requested):
            raise UsageError(f"invalid branch name: {requested!r}")
        return requested
    base = f"agentcli/{slug(task)}"
    name, n = base, 1
    while git.try_("rev-parse", "-q", "--verify", f"refs/heads/{name}") is not None:
        n += 1
        name = f"{base}-{n}"
    return name


def _valid_branch(git: Git, name: str) -> bool:
    """A name git takes for a branch as it is written (`check-ref-format --branch` would expand `@{-1}`)."""
    if name.startswith("-") or name == "HEAD":  # refs/heads/HEAD would make `HEAD` ambiguous
        return False
    return git.try_("check-ref-format", f"refs/heads/{name}") is not None


def validate_branch(root: Path, requested: str | None) -> None:
    """Fail before the run, not after it, on a name git would refuse or a branch that exists."""
    if not requested or requested == "auto":
        return
    git = Git(root)
    if not _valid_branch(git, requested):
        raise UsageError(f"invalid branch name: {requested!r}")
    if git.try_("rev-parse", "-q", "--verify", f"refs/heads/{requested}") is not None:
        raise UsageError(f"branch {requested!r} already exists: choose another name or delete it")


def change_patch(root: Path, checkpoint: Checkpoint) -> str:
    """The run's change as a binary-safe patch against the checkpoint."""
    patch = diff_since(root, checkpoint)
    return patch + "\n" if patch and not patch.endswith("\n") else patch


def fixed_patch_path(path: Path) -> Path:
    """`--output-patch` with its folder resolved now, while every folder on the way is still the user's."""
    return path.parent.resolve() / path.name


def write_patch(root: Path, path: Path, patch: str) -> None:
    """Write the patch (its bytes exactly, whatever their encoding) to `path` (from `fixed_patch_path`).

    Inside the repository the sandbox could have put a link, a FIFO or a linked folder at the path:
    there it is written without following any (NotAFile), never through one to a host file.
    """
    data = patch.encode("utf-8", "surrogateescape")
    try:
        untrusted.write_bytes(root.resolve(), path.relative_to(root.resolve()), data)
    except ValueError:  # outside the repository: the sandbox cannot reach it, and a link there is the user's
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def commit_change(root: Path, checkpoint: Checkpoint, branch: str, message: str) -> str:
    """Commit the run's change on top of the checkpoint's HEAD as `branch`; return the commit id."""
    git = Git(root)
    patch = change_patch(root, checkpoint)
    with scratch_index() as env:
        if checkpoint.head:
            git("read-tree", checkpoint.head, env=env)
        else:
            git("read-tree", "--empty", env=env)
        if patch.strip():
            try:
                git("apply", "--cached", "--binary", "--3way", env=env, input=patch)
            except Exception:
                raise UsageError(
                    "the change overlaps uncommitted work it could not be separated from; "
                    "use --output-patch instead of --branch"
                ) from None
        tree = git("write-tree", env=env)
        args = ["commit-tree", tree, "-F", "-"]
        if checkpoint.head:
            args += ["-p", checkpoint.head]
        commit = _commit_tree(git, args, message)
    # --no-deref: a symbolic ref the run planted under the name is replaced, not followed to another branch.
    ref = f"refs/heads/{branch}"
    git("update-ref", "--no-deref", "-m", "agentcli: commit the run's change", ref, commit, "0" * 40)
    return commit


def _commit_tree(git: Git, args: list[str], message: str) -> str:
    """commit-tree with the user's identity, or agentcli's where none is configured."""
    env = {} if git.try_("config", "user.email") else fallback_identity()
    env = {**env, **{k: v for k, v in os.environ.items() if k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}}
    return git(*args, env=env, input=message)


def commit_message(task: str, summary: str, session_id: str) -> str:
    first = " ".join(task.split())
    subject = first if len(first) <= 68 else first[:65].rstrip() + "..."
    body = summary.strip() or "Change made by agentcli."
    return f"{subject}\n\n{body}\n\nagentcli session: {session_id}\n"
