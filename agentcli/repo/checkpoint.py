"""Checkpoints of the user's whole working state, so `agentcli undo` restores it exactly.

A checkpoint is a commit object under `refs/agentcli/checkpoints/<session>` whose tree is the
working tree (tracked, modified and untracked files), built in a temporary index so the user's own
index is never touched. Its message records the tree of the user's index (what was staged), where
HEAD pointed, the branches there were, and a tree of the ignored files (`.env`, local data) under a
size cap, so all of them come back too. Every checkpoint is also copied outside the repository
(`mirror.py`), where the sandbox cannot reach it: that copy is what `undo` trusts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import stat
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.errors import UsageError
from agentcli.repo import mirror, objects
from agentcli.repo.git import EMPTY_TREE, Git, GitError
from agentcli.repo.snapshot import GITLINK, snapshot_tree

CHECKPOINT_REFS = mirror.CHECKPOINT_REFS
BEFORE_UNDO_REFS = "refs/agentcli/before-undo"
OWN_FOLDER = ".agentcli/"  # where older versions kept their sessions inside the repository
# Ignored files (`.env`, local data) a checkpoint keeps: each at most this big, all together at most that.
IGNORED_FILE_CAP = 10 * 1024 * 1024
IGNORED_TOTAL_CAP = 100 * 1024 * 1024
# Files of the git folder that git reads as settings and that are not mounted read-only in the sandbox
# (they may not exist, and a mount would create them): `commondir` would point git at other settings.
PLANTABLE = ("commondir", "config.worktree")
SHALLOW = "shallow"


def find_repo_root(path: Path) -> Path | None:
    """The top of the git work tree containing `path`, or None outside any."""
    import git

    try:
        return Path(git.Repo(path, search_parent_directories=True).working_tree_dir or "")
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


@contextlib.contextmanager
def scratch_index() -> Iterator[dict[str, str]]:
    """The environment of an empty throwaway index in a private folder; the user's own index is never touched."""
    with tempfile.TemporaryDirectory(prefix="agentcli-index-") as folder:
        yield {"GIT_INDEX_FILE": str(Path(folder) / "index")}


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
    # The ignored files kept (under the caps), as a tree; None where none were.
    ignored_tree: str | None = None
    # git's own settings (`config`, `hooks/`, `info/` of the git folder), as a tree.
    git_tree: str | None = None
    # Which of `PLANTABLE`, and which symbolic links, were in the `.git` folder.
    plantable: tuple[str, ...] = ()
    # When the checkpoint was taken (seconds since the epoch): what git's folder holds that changed
    # later is the sandbox's work (`objects.remove_forged`); None for a checkpoint that did not record it.
    made_at: float | None = None
    # The object store's folders then (`objects.folder_identities`).
    store_folders: tuple[int, ...] | None = None
    # The symbolic refs of the kinds the mirror keeps ({ref: target}): the mirror holds them as plain ones.
    symrefs: dict[str, str] | None = None


def ignored_tree(git: Git) -> str | None:
    """A tree of the ignored files, the shallowest and smallest first while they fit the caps (links
    are kept as links, never followed); None where there are none."""
    listing = git("ls-files", "-z", "--others", "--ignored", "--exclude-standard")
    sized = []
    for path in listing.split("\0"):
        if not path or path.endswith("/") or path.startswith(OWN_FOLDER):
            continue
        found = untrusted.lstat(git.root, path)
        if found is not None and (stat.S_ISREG(found.st_mode) or stat.S_ISLNK(found.st_mode)):
            sized.append((path.count("/"), found.st_size, path))
    kept, total = [], 0
    for _, size, path in sorted(sized):
        if size <= IGNORED_FILE_CAP and total + size <= IGNORED_TOTAL_CAP:
            kept.append(path)
            total += size
    if not kept:
        return None
    with scratch_index() as env:
        git("add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul", env=env, input="\0".join(kept))
        return git("write-tree", env=env)


def present_plantable(root: Path) -> tuple[str, ...]:
    """Which of `PLANTABLE`, and which symbolic links, the repository's `.git` folder holds now (read
    without git, which would follow them)."""
    dot = root / ".git"
    found = [name for name in PLANTABLE if untrusted.lstat(dot, name) is not None]
    return tuple(found + _links(dot))


def _links(folder: Path) -> list[str]:
    """The symbolic links under `folder` (none followed), relative to it. git follows a link it finds in its
    folder when it writes there: a reflog appended to, a ref or an object written, through to a host file."""
    found: list[str] = []
    pending = [""] if folder.is_dir() and not folder.is_symlink() else []
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(folder / relative))
        except OSError:
            continue
        for entry in entries:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_symlink():
                found.append(path)
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
    return sorted(found)


def remove_planted(root: Path, checkpoint: Checkpoint) -> list[str]:
    """Remove the files of `PLANTABLE` and the symbolic links that appeared in the `.git` folder since
    the checkpoint (writable inside the sandbox, read or written through by the next git command, agentcli's
    or the user's); the ones removed. Needs no git, so that nothing the sandbox did to the repository's
    objects can stop it."""
    new = set(present_plantable(root)) - set(checkpoint.plantable)
    if checkpoint.made_at is None:  # an older checkpoint, which recorded no links: the user's may be there
        new &= set(PLANTABLE)
    return [f".git/{name}" for name in sorted(new) if untrusted.remove(root / ".git", name)]


def remove_forged_objects(root: Path, checkpoint: Checkpoint) -> list[str]:
    """Remove the objects the run wrote that are not what they claim to be (`objects.py`), and bring
    back from the mirror those of them the checkpoint needs; the paths removed, in the object store."""
    if checkpoint.made_at is None:
        return []
    git = Git(root)
    removed = objects.remove_forged(git, checkpoint.made_at, checkpoint.store_folders)
    if removed and (kept := mirror.repository(root)) is not None:
        mirror.copy_missing(git, kept, mirror.kept_tips(kept, checkpoint.name, checkpoint.commit))
    return removed


def _git_settings_files(git: Git) -> list[tuple[str, int]]:
    """(path in the git folder, mode) of the regular files that make git run things or steer what it reads:
    `config`, `hooks/`, `info/`, and `shallow` (where history ends: one planted stops undo's walk)."""
    found = []
    folders = [f"{d}/{n}" for d in ("hooks", "info") for n in _names(git.common_dir / d)]
    names = ["config", SHALLOW, *PLANTABLE, *folders]
    for relative in names:
        status = untrusted.lstat(git.common_dir, relative)
        if status is not None and stat.S_ISREG(status.st_mode) and status.st_size <= IGNORED_FILE_CAP:
            found.append((relative, 0o100755 if status.st_mode & 0o111 else 0o100644))
    return found


def _names(folder: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(folder) if not entry.is_symlink())
    except OSError:
        return []


def git_settings_tree(git: Git) -> str | None:
    """A tree of the git folder's `config`, `hooks/` and `info/` as they are now."""
    files = _git_settings_files(git)
    if not files:
        return None
    with tempfile.TemporaryDirectory(prefix="agentcli-settings-") as folder:
        # Copies read without following links: hash-object would follow one swapped in meanwhile.
        copies = []
        for number, (relative, _) in enumerate(files):
            copy = Path(folder) / str(number)
            copy.write_bytes(untrusted.read_bytes(git.common_dir, relative, IGNORED_FILE_CAP))
            copies.append(str(copy))
        shas = git("hash-object", "-w", "--no-filters", "--stdin-paths", input="\n".join(copies) + "\n").split()
    lines = [f"{mode:o} {sha}\t{relative}" for (relative, mode), sha in zip(files, shas, strict=True)]
    with scratch_index() as env:
        git("update-index", "--index-info", env=env, input="\n".join(lines) + "\n")
        return git("write-tree", env=env)


def git_settings_changed(root: Path, checkpoint: Checkpoint) -> list[str]:
    """The files of git's own settings a run changed, added or removed (`.git/hooks/pre-commit`)."""
    return [f".git/{path}" for path in _settings_changes(Git(root), checkpoint)]


def _settings_changes(git: Git, checkpoint: Checkpoint) -> list[str]:
    if checkpoint.git_tree is None:
        return []
    now = git_settings_tree(git) or EMPTY_TREE
    out = git("diff-tree", "-r", "--no-renames", "--name-only", "-z", checkpoint.git_tree, now)
    # An older checkpoint did not keep `shallow`: it is no change the run made, and must not go.
    return [path for path in out.split("\0") if path and (path != SHALLOW or checkpoint.made_at is not None)]


def _restore_git_settings(git: Git, checkpoint: Checkpoint) -> None:
    """Put the files of git's own settings that changed back as they were at the checkpoint (those
    added since go); a link or folder planted in place of one goes first."""
    changed = _settings_changes(git, checkpoint)
    if not changed:
        return
    kept = {}
    for line in git("ls-tree", "-r", "-z", checkpoint.git_tree or EMPTY_TREE, "--", *changed).split("\0"):
        if line:
            meta, _, relative = line.partition("\t")
            mode, _, sha = meta.split(" ")
            kept[relative] = (int(mode, 8), sha)
    for relative in changed:
        untrusted.remove(git.common_dir, relative)
        if relative in kept:
            mode, sha = kept[relative]
            untrusted.write_bytes(git.common_dir, relative, git.blob(sha), mode=mode & 0o777)


def create_checkpoint(root: Path, name: str, exclude: tuple[str, ...] = (), *, keep_ref: bool = True) -> Checkpoint:
    """Snapshot the working tree, index and HEAD; `keep_ref` names it under CHECKPOINT_REFS, where
    `undo` finds it (without, it lives only as long as the returned object is used)."""
    plantable = present_plantable(root)
    git = Git(root)
    store_folders = objects.folder_identities(git)
    tree = snapshot_tree(git, exclude)
    ignored = ignored_tree(git)
    settings = git_settings_tree(git)
    index_tree = git.try_("write-tree")
    head = git.try_("rev-parse", "-q", "--verify", "HEAD^{commit}")
    head_ref = git.try_("symbolic-ref", "-q", "HEAD")
    branches = tuple(git("for-each-ref", "--format=%(refname)", "refs/heads").split())
    symrefs = mirror.symbolic_refs(git)
    # After the writes above: git "freshens" a pack holding an object it was asked to write (a new change
    # time), and a pack only the checkpoint freshened is no change of the run's.
    made_at = time.time()
    message = "\n".join(
        [
            f"agentcli checkpoint {name}",
            "",
            f"index-tree: {index_tree or '-'}",
            f"head: {head or '-'}",
            f"head-ref: {head_ref or '-'}",
            f"exclude: {json.dumps(list(exclude))}",
            f"branches: {json.dumps(list(branches))}",
            f"ignored-tree: {ignored or '-'}",
            f"git-tree: {settings or '-'}",
            f"plantable: {json.dumps(list(plantable))}",
            f"made-at: {made_at!r}",
            f"store-folders: {json.dumps(list(store_folders))}",
            f"symrefs: {json.dumps(symrefs)}",
        ]
    )
    # The extra trees hang from parent commits of their own, so that copying the checkpoint copies them;
    # those sit on HEAD's commit, so that the repository gains no root commit (`git rev-list
    # --max-parents=0 --all` is how many find a repository's first commit).
    identity = fallback_identity()
    parents = [head] if head else []
    extras = ((index_tree, "index"), (ignored, "ignored"), (settings, "git"))
    on_head = ("-p", head) if head else ()
    parents += [git("commit-tree", t, *on_head, "-m", what, env=identity) for t, what in extras if t]
    commit = git(
        "commit-tree", tree, "-m", message, *(arg for parent in parents for arg in ("-p", parent)), env=identity
    )
    checkpoint = Checkpoint(
        name, commit, tree, index_tree, head, head_ref, tuple(exclude), branches, ignored, settings, plantable,
        made_at=made_at, store_folders=store_folders, symrefs=symrefs,
    )  # fmt: skip
    if keep_ref:
        git("update-ref", f"{CHECKPOINT_REFS}/{name}", commit)
        mirror.keep(git, name, f"{CHECKPOINT_REFS}/{name}", commit)
    return checkpoint


def set_aside(root: Path, name: str, checkpoint: Checkpoint) -> Checkpoint | None:
    """The work as it stands, snapshotted like a checkpoint that undo never sees (an attempt's state, to
    come back if no later attempt does better), kept in the mirror so that nothing done to the
    repository's objects afterwards loses or changes it; None where the mirror could not take it.

    What the sandbox planted in `.git` since the task's `checkpoint` goes first (links, special files,
    forged objects: the push reads the store), and the state keeps that checkpoint's links and git
    settings as its own: none the run made is ever trusted."""
    remove_planted(root, checkpoint)
    if (dot := root / ".git").is_dir() and not dot.is_symlink():
        mirror.remove_special_files(dot)  # before the git calls below: one opening a FIFO would block
    remove_forged_objects(root, checkpoint)
    state = create_checkpoint(root, name, checkpoint.exclude, keep_ref=False)
    state = dataclasses.replace(state, plantable=checkpoint.plantable, git_tree=checkpoint.git_tree)
    return state if mirror.set_aside(Git(root), name, state.commit) else None


def restore_aside(root: Path, state: Checkpoint, checkpoint: Checkpoint) -> None:
    """Bring back `state`, set aside since the task's `checkpoint`: first the repository as at that
    checkpoint, refs and all (a later attempt's replace refs and tags would stay otherwise; they are
    kept under `refs/agentcli/before-undo/`), then the state's work tree, index and HEAD (the branch
    HEAD names included; the state keeps no other ref)."""
    restore(root, checkpoint)
    restore(root, state)


def fallback_identity() -> dict[str, str]:
    """Checkpoint commits need an author even where the user configured none."""
    return {
        "GIT_AUTHOR_NAME": os.environ.get("GIT_AUTHOR_NAME", "agentcli"),
        "GIT_AUTHOR_EMAIL": os.environ.get("GIT_AUTHOR_EMAIL", "agentcli@localhost"),
        "GIT_COMMITTER_NAME": os.environ.get("GIT_COMMITTER_NAME", "agentcli"),
        "GIT_COMMITTER_EMAIL": os.environ.get("GIT_COMMITTER_EMAIL", "agentcli@localhost"),
    }


def load_checkpoint(root: Path, name: str | None = None) -> Checkpoint:
    """A named checkpoint, or the newest one: from agentcli's own copy outside the repository, which
    the sandbox cannot reach, never from the repository's refs (the sandbox's to rewrite)."""
    git = mirror.repository(root)
    if git is None:
        raise UsageError(f"no agentcli checkpoint kept for {root} (in {mirror.location(root)}): nothing to undo")
    if name is None:
        listing = git("for-each-ref", "--sort=-committerdate", "--count=1", "--format=%(refname)", CHECKPOINT_REFS)
        if not listing:
            raise UsageError("no agentcli checkpoint in this repository: nothing to undo")
        name = listing.strip().rsplit("/", 1)[-1]
    commit = git.try_("rev-parse", "-q", "--verify", f"{CHECKPOINT_REFS}/{name}^{{commit}}")
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
        ignored_tree=fields.get("ignored-tree"),
        git_tree=fields.get("git-tree"),
        plantable=tuple(json.loads(fields.get("plantable") or "[]")),
        made_at=float(fields["made-at"]) if fields.get("made-at") else None,
        store_folders=tuple(json.loads(fields["store-folders"])) if fields.get("store-folders") else None,
        symrefs=json.loads(fields["symrefs"]) if fields.get("symrefs") else None,
    )


def changed_paths(root: Path, checkpoint: Checkpoint) -> list[tuple[str, str]]:
    """(status letter, path) for every file that differs between the checkpoint and now."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    # -z and bytes: a name with a tab, a quote, a carriage return or non-ASCII letters comes as it is,
    # neither quoted by git nor with its line ends translated. A name that is no UTF-8 is left out: no
    # check can name it to the sandbox or the journal.
    out = git.raw("diff-tree", "-r", "--no-renames", "--name-status", "-z", checkpoint.tree, now)
    fields = out.split(b"\0")
    pairs = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        with contextlib.suppress(UnicodeDecodeError):
            pairs.append((status.decode(), path.decode()))
    return pairs


def copied_from(root: Path, checkpoint: Checkpoint) -> dict[str, str]:
    """Each file the task moved or copied (by git's rename and copy detection: a new path with most of
    the content of a file at the checkpoint), and that file's path."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    # Every file a copy's source (bounded: git gives up on more pairs than -l's square, not guessing).
    found = ("-C", "--find-copies-harder", "-l1000", "--diff-filter=RC")
    out = git.raw("diff-tree", "-r", *found, "--name-status", "-z", checkpoint.tree, now)
    fields = out.split(b"\0")  # R<score> or C<score>, the old path, the new path
    moved = {}
    for old, new in zip(fields[1::3], fields[2::3], strict=False):
        with contextlib.suppress(UnicodeDecodeError):
            moved[new.decode()] = old.decode()
    return moved


def content_at(root: Path, checkpoint: Checkpoint, path: str, limit: int) -> bytes | None:
    """A file's content at the checkpoint; None where it had none there, had more than `limit` bytes,
    or cannot be read."""
    return Git(root).blob_within(f"{checkpoint.tree}:{path}", limit)


def untouched_since(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether the working tree, the index, HEAD and its branch are all as at the checkpoint."""
    git = Git(root)
    return (
        snapshot_tree(git, checkpoint.exclude) == checkpoint.tree
        and git.try_("write-tree") == checkpoint.index_tree
        and git.try_("rev-parse", "-q", "--verify", "HEAD^{commit}") == checkpoint.head
        and git.try_("symbolic-ref", "-q", "HEAD") == checkpoint.head_ref
    )


def nested_repositories_added(root: Path, checkpoint: Checkpoint) -> list[str]:
    """Nested git repositories (gitlinks) the work tree holds now and did not at the checkpoint."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    raw = git("diff-tree", "-r", "--no-renames", "-z", checkpoint.tree, now)
    fields = [f for f in raw.split("\0") if f]
    return [path for meta, path in zip(fields[0::2], fields[1::2], strict=False) if meta.split()[1] == GITLINK]


def damaged(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether the repository lost its git data since the checkpoint (`rm -rf .git`, its commits deleted)."""
    try:
        git = Git(root)
    except GitError:
        return True
    if git.try_("rev-parse", "--git-dir") is None:
        return True
    return checkpoint.head is not None and git.try_("cat-file", "-e", f"{checkpoint.head}^{{commit}}") is None


def moved_since(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether HEAD is at another commit than at the checkpoint (a commit made, or checked out)."""
    return Git(root).try_("rev-parse", "-q", "--verify", "HEAD^{commit}") != checkpoint.head


def staged_since(root: Path, checkpoint: Checkpoint) -> list[str]:
    """Paths staged (added or changed, not deleted: `git rm` stages a deletion as it makes it) and not
    committed, when the index has changed since the checkpoint (else [])."""
    git = Git(root)
    if git.try_("write-tree") == checkpoint.index_tree:
        return []
    staged = git.try_("diff", "--cached", "--name-only", "--diff-filter=d", "-z")
    return [path for path in (staged or "").split("\0") if path]


def diff_since(root: Path, checkpoint: Checkpoint, *, stat: bool = False) -> str:
    """The change made since the checkpoint, as a patch (or a diffstat)."""
    git = Git(root)
    now = snapshot_tree(git, checkpoint.exclude)
    # The user's settings may not change the patch: no colour, git's own prefixes (`git apply` needs
    # them), and a nested repository's new commit shown as such (between two trees, without entering it).
    args = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/"]
    args += ["--ignore-submodules=none", "--submodule=short"]
    args += ["--stat"] if stat else ["--binary", "--full-index"]
    return git(*args, checkpoint.tree, now)


def restore(root: Path, checkpoint: Checkpoint, *, remove_branches: bool = True) -> list[str]:
    """Bring the working tree, index and HEAD back to the checkpoint, and (`remove_branches`) delete the
    branches made since; return the paths touched.

    The state being replaced is saved first (`refs/agentcli/before-undo/<name>`), so an undo can
    itself be taken back.
    """
    remove_planted(root, checkpoint)  # again: a run killed before its end left them
    trusted = (checkpoint.made_at, checkpoint.store_folders)
    git = mirror.recover(root, checkpoint.name, checkpoint.commit, checkpoint.head_ref, *trusted)
    if git.try_("ls-files", "-z", "--", ".git-index-probe") is None:
        # An index git cannot read stops every git command; the checkpoint's own comes back below.
        untrusted.remove(git.git_dir, "index")
    before = create_checkpoint(
        root, f"undo-{checkpoint.name}-{uuid.uuid4().hex[:6]}", checkpoint.exclude, keep_ref=False
    )
    git("update-ref", f"{BEFORE_UNDO_REFS}/{checkpoint.name}", before.commit)
    added, restored = _make_tree(git, root, checkpoint.tree, before.tree)
    if checkpoint.ignored_tree:
        # Ignored files come back as they were (git's checkout replaces a link on the way, never follows it).
        with scratch_index() as env:
            git("read-tree", checkpoint.ignored_tree, env=env)
            git("checkout-index", "-f", "-a", env=env)
    _restore_git_settings(git, checkpoint)
    _restore_head(git, checkpoint, before)
    if remove_branches:
        _restore_refs(git, checkpoint, f"{BEFORE_UNDO_REFS}/{before.name}")
    if checkpoint.index_tree:
        git("read-tree", checkpoint.index_tree)
    return added + restored


def bring_tree(root: Path, tree: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Make the working tree the snapshot `tree` (files only: the index, HEAD and ignored files stay);
    return the paths touched."""
    git = Git(root)
    added, restored = _make_tree(git, root, tree, snapshot_tree(git, exclude))
    return added + restored


class TreeNotPutBack(OSError):
    """The work tree could not be brought back after a block agentcli ran on its own: the run ends
    (as the sandbox breaking it would), and `agentcli undo` brings back the start."""


@contextlib.contextmanager
def tree_kept(root: Path, exclude: tuple[str, ...] = ()) -> Iterator[list[str]]:
    """Put the working tree's files back as they were before the block; the list it yields holds,
    afterwards, the paths put back. For commands agentcli runs on its own (a look before the first reply,
    the checks on "done", a candidate change judged by them). Files git ignores are never
    removed, and are not brought back either: a snapshot holds none of them. A tree that cannot be put
    back raises TreeNotPutBack, as going on would build on a change nobody chose; where the block
    itself raised, its error is the one that propagates."""
    git = Git(root)
    before = snapshot_tree(git, exclude)
    touched: list[str] = []
    try:
        yield touched
    except BaseException:
        with contextlib.suppress(GitError, OSError):
            touched += _put_back(git, root, before, exclude)
        raise
    try:
        touched += _put_back(git, root, before, exclude)
    except (GitError, OSError) as e:
        raise TreeNotPutBack(f"the work tree could not be put back after a check: {e}") from e


def _put_back(git: Git, root: Path, before: str, exclude: tuple[str, ...]) -> list[str]:
    """Bring the working tree to the snapshot `before`, ignore files first: under ignore rules the block
    changed, files ignored before it would count as new ones and be removed."""
    now = snapshot_tree(git, exclude)
    if now == before:
        return []
    changed = [p for p in git("diff-tree", "-r", "--no-renames", "--name-only", "-z", before, now).split("\0") if p]
    rules = [path for path in changed if path.rsplit("/", 1)[-1] == ".gitignore"]
    for path in rules:
        if git.try_("cat-file", "-e", f"{before}:{path}") is None:
            untrusted.remove(root, path)
        else:
            untrusted.write_bytes(root, path, git.blob(git("rev-parse", f"{before}:{path}")))
    if rules:
        now = snapshot_tree(git, exclude)
    added, restored = _make_tree(git, root, before, now)
    _give_back_ownership(root, [*rules, *restored])
    return sorted({*rules, *added, *restored})


def _give_back_ownership(root: Path, paths: list[str]) -> None:
    """Files written back by agentcli running as root belong to the repository's owner again (a
    sandbox's unprivileged user must be able to change them)."""
    if os.geteuid() != 0:
        return
    owner = (root.stat().st_uid, root.stat().st_gid)
    if owner == (0, 0):
        return
    for path in paths:
        untrusted.give_to(root, path, owner)


def _make_tree(git: Git, root: Path, target: str, current: str) -> tuple[list[str], list[str]]:
    """Turn the working tree, whose snapshot is `current`, into `target`: (paths removed, paths written)."""
    diff = git("diff-tree", "-r", "--no-renames", "--name-status", "-z", target, current)
    fields = [f for f in diff.split("\0") if f]
    added, restored = [], []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        (added if status == "A" else restored).append(path)
    for path in added:
        untrusted.remove(root, path)
        if "/" in path:
            untrusted.remove_empty_folders(root, path.rsplit("/", 1)[0])
    if restored:
        with scratch_index() as env:
            git("read-tree", target, env=env)
            for path in restored:
                found = untrusted.lstat(root, path)
                if found is not None and stat.S_ISDIR(found.st_mode):
                    untrusted.remove(root, path)
            for chunk in _chunks(restored, 500):
                git("checkout-index", "-f", "--", *chunk, env=env)
    return added, restored


def ignored_entries(root: Path) -> set[str]:
    """Ignored files and directories (collapsed) present now, outside agentcli's own folder."""
    out = Git(root)("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
    return {entry for entry in out.split("\0") if entry and not entry.startswith(OWN_FOLDER)}


def remove_created_ignored(root: Path, checkpoint: Checkpoint, before: set[str], after: set[str]) -> list[str]:
    """Remove ignored entries that appeared during a run (caches, build output the agent made).

    Only entries absent before the run and present at its end are touched, so ignored files the
    user creates later are left alone; and never one the checkpoint holds, or a folder holding one
    (a run that ignores `notes.txt` or `src/` does not make undo delete them).
    """
    git = Git(root)
    kept = set()
    for tree in (checkpoint.tree, checkpoint.ignored_tree):
        if tree:
            kept |= set(git("ls-tree", "-r", "-t", "--name-only", "-z", tree).split("\0"))
    created = [entry for entry in sorted(after - before) if entry.rstrip("/") not in kept]
    return [entry for entry in created if untrusted.remove(root, entry.rstrip("/"))]


def _restore_head(git: Git, checkpoint: Checkpoint, now: Checkpoint) -> None:
    """Put HEAD back where it was if the agent committed or switched branches (its commits stay in the reflog)."""
    if checkpoint.head_ref and now.head_ref != checkpoint.head_ref:
        git("symbolic-ref", "HEAD", checkpoint.head_ref)
    if checkpoint.head is None:
        return
    if checkpoint.head_ref:
        current = git.try_("rev-parse", "-q", "--verify", checkpoint.head_ref)
        if current != checkpoint.head:
            git("update-ref", "--no-deref", "-m", "agentcli undo", checkpoint.head_ref, checkpoint.head)
    elif now.head != checkpoint.head or now.head_ref is not None:  # detached again where it was
        git("update-ref", "--no-deref", "-m", "agentcli undo", "HEAD", checkpoint.head)


def _restore_refs(git: Git, checkpoint: Checkpoint, saved_under: str) -> None:
    """Put the refs back as they were at the checkpoint, each one replaced or removed kept first under
    `saved_under` (one for each undo), so that its commits stay reachable and an undo can itself be
    taken back: all of them where agentcli's copy holds the checkpoint's refs; else (a checkpoint of an
    attempt, or one older than that copy of refs) only the branches made since go (`git checkout -b
    fix/typo`)."""
    kept = checkpoint.symrefs is not None
    if kept and mirror.restore_refs(git, checkpoint.name, checkpoint.symrefs or {}, saved_under) is not None:
        return
    if checkpoint.branches is None:
        return
    known = set(checkpoint.branches)
    for ref in git("for-each-ref", "--format=%(refname)", "refs/heads").split():
        if ref not in known:
            git.try_("update-ref", f"{saved_under}/{ref.removeprefix('refs/')}", ref)
            git.try_("update-ref", "--no-deref", "-d", ref)


def _chunks(items: list[str], size: int):
    for i in range(0, len(items), size):
        yield items[i : i + size]
