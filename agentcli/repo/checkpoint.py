"""Checkpoints of the user's whole working state, so `agentcli undo` restores it exactly.

A checkpoint is a commit object under `refs/agentcli/checkpoints/<session>` whose tree is the
working tree (tracked, modified and untracked files; ignored files are not included), built in a
temporary index so the user's own index is never touched. Its message records the tree of the
user's index (what was staged) and where HEAD pointed, so both come back too.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from agentcli.errors import UsageError

CHECKPOINT_REFS = "refs/agentcli/checkpoints"
BEFORE_UNDO_REFS = "refs/agentcli/before-undo"
EXCLUDE_LINE = ".agentcli/"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class Git:
    """A thin runner for git commands in one repository (through GitPython's command wrapper)."""

    def __init__(self, root: Path):
        import git

        self.root = root
        self._git = git.Git(str(root))
        self._error = git.GitCommandError

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self._git.execute(["git", *args], env={**os.environ, **(env or {})})

    def run_with_input(self, args: list[str], text: str, env: dict[str, str] | None = None) -> str:
        """Run with `text` on standard input (e.g. a commit message for commit-tree -F -)."""
        import subprocess

        done = subprocess.run(
            ["git", *args], input=text, capture_output=True, text=True, cwd=self.root, env={**os.environ, **(env or {})}
        )
        if done.returncode != 0:
            raise self._error(["git", *args], done.returncode, done.stderr)
        return done.stdout.strip()

    def try_(self, *args: str, env: dict[str, str] | None = None) -> str | None:
        """Run and return stdout, or None when git exits non-zero."""
        try:
            return self(*args, env=env)
        except self._error:
            return None

    @property
    def git_dir(self) -> Path:
        return Path(self("rev-parse", "--absolute-git-dir"))


def find_repo_root(path: Path) -> Path | None:
    """The top of the git work tree containing `path`, or None outside any."""
    import git

    try:
        return Path(git.Repo(path, search_parent_directories=True).working_tree_dir or "")
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def ensure_excluded(git: Git) -> None:
    """Keep agentcli's session files out of the user's status, diffs and checkpoints."""
    exclude = git.git_dir / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    current = exclude.read_text() if exclude.exists() else ""
    if EXCLUDE_LINE not in current.splitlines():
        with open(exclude, "a") as f:
            f.write(("" if current.endswith("\n") or not current else "\n") + EXCLUDE_LINE + "\n")


@dataclass
class Checkpoint:
    name: str
    commit: str
    tree: str  # the working tree
    index_tree: str | None  # the user's index; None when it had unresolved conflicts
    head: str | None  # the commit HEAD pointed at; None on an unborn branch
    head_ref: str | None  # the branch HEAD was on; None when detached
    # Paths left out of every snapshot: files agentcli itself writes, e.g. `> events.jsonl` in the repo.
    exclude: tuple[str, ...] = ()
    # The branches (refs/heads/...) there were; None for a checkpoint made before they were recorded.
    branches: tuple[str, ...] | None = None


def snapshot_tree(git: Git, exclude: tuple[str, ...] = ()) -> str:
    """The tree of the working tree as it is now (less `exclude`), written through a throwaway index."""
    index = git.git_dir / f"agentcli-index-{uuid.uuid4().hex}"
    real_index = git.git_dir / "index"
    try:
        if real_index.exists():
            shutil.copyfile(real_index, index)
        env = {"GIT_INDEX_FILE": str(index)}
        git("add", "-A", "--", ".", *(f":(exclude,literal){path}" for path in exclude), env=env)
        return git("write-tree", env=env)
    finally:
        index.unlink(missing_ok=True)


def create_checkpoint(root: Path, name: str, exclude: tuple[str, ...] = (), *, keep_ref: bool = True) -> Checkpoint:
    """Snapshot the working tree, index and HEAD; `keep_ref` names it under CHECKPOINT_REFS, where
    `undo` finds it (without, it lives only as long as the returned object is used)."""
    git = Git(root)
    ensure_excluded(git)
    tree = snapshot_tree(git, exclude)
    index_tree = git.try_("write-tree")
    head = git.try_("rev-parse", "-q", "--verify", "HEAD^{commit}")
    head_ref = git.try_("symbolic-ref", "-q", "HEAD")
    branches = tuple(git("for-each-ref", "--format=%(refname)", "refs/heads").split())
    message = "\n".join(
        [
            f"agentcli checkpoint {name}",
            "",
            f"index-tree: {index_tree or '-'}",
            f"head: {head or '-'}",
            f"head-ref: {head_ref or '-'}",
            f"exclude: {json.dumps(list(exclude))}",
            f"branches: {json.dumps(list(branches))}",
        ]
    )
    args = ["commit-tree", tree, "-m", message] + (["-p", head] if head else [])
    commit = git(*args, env=fallback_identity())
    if keep_ref:
        git("update-ref", f"{CHECKPOINT_REFS}/{name}", commit)
    return Checkpoint(name, commit, tree, index_tree, head, head_ref, tuple(exclude), branches)


def fallback_identity() -> dict[str, str]:
    """Checkpoint commits need an author even where the user configured none."""
    return {
        "GIT_AUTHOR_NAME": os.environ.get("GIT_AUTHOR_NAME", "agentcli"),
        "GIT_AUTHOR_EMAIL": os.environ.get("GIT_AUTHOR_EMAIL", "agentcli@localhost"),
        "GIT_COMMITTER_NAME": os.environ.get("GIT_COMMITTER_NAME", "agentcli"),
        "GIT_COMMITTER_EMAIL": os.environ.get("GIT_COMMITTER_EMAIL", "agentcli@localhost"),
    }


def load_checkpoint(root: Path, name: str | None = None, refs: str = CHECKPOINT_REFS) -> Checkpoint:
    """A named checkpoint, or the newest one."""
    git = Git(root)
    if name is None:
        listing = git("for-each-ref", "--sort=-committerdate", "--count=1", "--format=%(refname)", refs)
        if not listing:
            raise UsageError("no agentcli checkpoint in this repository: nothing to undo")
        ref = listing.strip()
        name = ref.rsplit("/", 1)[-1]
    else:
        ref = f"{refs}/{name}"
    commit = git.try_("rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
    if commit is None:
        raise UsageError(f"no checkpoint named {name!r} (see `agentcli sessions`)")
    fields = {}
    for line in git("log", "-1", "--format=%B", commit).splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields[key] = None if value == "-" else value
    return Checkpoint(
        name=name,
        commit=commit,
        tree=git("rev-parse", f"{commit}^{{tree}}"),
        index_tree=fields.get("index-tree"),
        head=fields.get("head"),
        head_ref=fields.get("head-ref"),
        exclude=tuple(json.loads(fields.get("exclude") or "[]")),
        branches=tuple(json.loads(fields["branches"])) if fields.get("branches") else None,
    )


def changed_paths(root: Path, checkpoint: Checkpoint) -> list[tuple[str, str]]:
    """(status letter, path) for every file that differs between the checkpoint and now."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    out = git("diff-tree", "-r", "--no-renames", "--name-status", checkpoint.tree, now)
    pairs = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        pairs.append((status, path))
    return pairs


def untouched_since(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether the working tree, the index, HEAD and its branch are all as at the checkpoint."""
    git = Git(root)
    return (
        snapshot_tree(git, checkpoint.exclude) == checkpoint.tree
        and git.try_("write-tree") == checkpoint.index_tree
        and git.try_("rev-parse", "-q", "--verify", "HEAD^{commit}") == checkpoint.head
        and git.try_("symbolic-ref", "-q", "HEAD") == checkpoint.head_ref
    )


def moved_since(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether HEAD is at another commit than at the checkpoint (a commit made, or checked out)."""
    return Git(root).try_("rev-parse", "-q", "--verify", "HEAD^{commit}") != checkpoint.head


def staged_since(root: Path, checkpoint: Checkpoint) -> list[str]:
    """Paths staged and not committed, when the index has changed since the checkpoint (else [])."""
    git = Git(root)
    if git.try_("write-tree") == checkpoint.index_tree:
        return []
    staged = git.try_("diff", "--cached", "--name-only", "-z")
    return [path for path in (staged or "").split("\0") if path]


def diff_since(root: Path, checkpoint: Checkpoint, *, stat: bool = False) -> str:
    """The change made since the checkpoint, as a patch (or a diffstat)."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    args = ["diff", "--stat"] if stat else ["diff", "--binary", "--full-index"]
    return git(*args, checkpoint.tree, now)


def restore(root: Path, checkpoint: Checkpoint, *, remove_branches: bool = True) -> list[str]:
    """Bring the working tree, index and HEAD back to the checkpoint, and (`remove_branches`) delete the
    branches made since; return the paths touched.

    The state being replaced is saved first (`refs/agentcli/before-undo/<name>`), so an undo can
    itself be taken back.
    """
    git = Git(root)
    before = create_checkpoint(
        root, f"undo-{checkpoint.name}-{uuid.uuid4().hex[:6]}", checkpoint.exclude, keep_ref=False
    )
    git("update-ref", f"{BEFORE_UNDO_REFS}/{checkpoint.name}", before.commit)
    diff = git("diff-tree", "-r", "--no-renames", "--name-status", "-z", checkpoint.tree, before.tree)
    fields = [f for f in diff.split("\0") if f]
    added, restored = [], []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        (added if status == "A" else restored).append(path)
    for path in added:
        target = root / path
        if target.is_symlink() or target.is_file():
            target.unlink()
        _prune_empty_dirs(root, target.parent)
    if restored:
        index = git.git_dir / f"agentcli-index-{uuid.uuid4().hex}"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            git("read-tree", checkpoint.tree, env=env)
            for path in restored:
                target = root / path
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
            for chunk in _chunks(restored, 500):
                git("checkout-index", "-f", "--", *chunk, env=env)
        finally:
            index.unlink(missing_ok=True)
    _restore_head(git, checkpoint, before)
    if remove_branches:
        _remove_new_branches(git, checkpoint)
    if checkpoint.index_tree:
        git("read-tree", checkpoint.index_tree)
    return added + restored


def uncommitted_entries(root: Path) -> set[str]:
    """`git status --porcelain` lines now (`?? debug.log`, ` M app.py`): what is not committed."""
    return {line for line in Git(root)("status", "--porcelain", "--untracked-files=all").splitlines() if line.strip()}


def ignored_entries(root: Path) -> set[str]:
    """Ignored files and directories (collapsed) present now, outside agentcli's own folder."""
    out = Git(root)("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
    return {entry for entry in out.split("\0") if entry and not entry.startswith(EXCLUDE_LINE)}


def remove_created_ignored(root: Path, before: set[str], after: set[str]) -> list[str]:
    """Remove ignored entries that appeared during a run (caches, build output the agent made).

    Only entries absent before the run and present at its end are touched, so ignored files the
    user creates later are left alone.
    """
    removed = []
    for entry in sorted(after - before):
        target = root / entry.rstrip("/")
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            continue
        removed.append(entry)
    return removed


def _restore_head(git: Git, checkpoint: Checkpoint, now: Checkpoint) -> None:
    """Put HEAD back where it was if the agent committed or switched branches (its commits stay in the reflog)."""
    if checkpoint.head_ref and now.head_ref != checkpoint.head_ref:
        git("symbolic-ref", "HEAD", checkpoint.head_ref)
    if checkpoint.head is None:
        return
    if checkpoint.head_ref:
        current = git.try_("rev-parse", "-q", "--verify", checkpoint.head_ref)
        if current != checkpoint.head:
            git("update-ref", "-m", "agentcli undo", checkpoint.head_ref, checkpoint.head)
    elif now.head != checkpoint.head:
        git("update-ref", "--no-deref", "-m", "agentcli undo", "HEAD", checkpoint.head)


def _remove_new_branches(git: Git, checkpoint: Checkpoint) -> None:
    """Delete the branches made since the checkpoint (`git checkout -b fix/typo`), each kept first
    under BEFORE_UNDO_REFS so that its commits stay reachable and an undo can itself be taken back."""
    if checkpoint.branches is None:
        return
    known = set(checkpoint.branches)
    for ref in git("for-each-ref", "--format=%(refname)", "refs/heads").split():
        if ref not in known:
            branch = ref.removeprefix("refs/heads/")
            git("update-ref", f"{BEFORE_UNDO_REFS}/{checkpoint.name}-branches/{branch}", ref)
            git("update-ref", "-d", ref)


def _prune_empty_dirs(root: Path, directory: Path) -> None:
    root = root.resolve()
    directory = directory.resolve()
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _chunks(items: list[str], size: int):
    for i in range(0, len(items), size):
        yield items[i : i + size]
