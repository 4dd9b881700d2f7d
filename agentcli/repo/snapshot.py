"""The tree of the work tree as it is now, read without trusting what the sandbox can write in `.git/index`.

git decides which files changed from the stat data its index keeps, and skips entries flagged
`assume-unchanged` or `skip-worktree`. The user's index is the sandbox's to write: one command
(`git update-index --assume-unchanged f`), or an index written with a changed file's stat data, would
hide a change from the diff and from `undo`. So a snapshot takes only which paths are tracked, and
their blobs, from the user's index; the stat data comes from an index of agentcli's own, in a private
folder, written by git on the host from the files themselves (and git's settings that would weaken
its checks are pinned in `git.py`). Files outside a sparse checkout's cone are in no snapshot.

git compares change times (ctime, which no command can set back) to the second only, and its check
for files changed in the second their stat data was taken looks at the modification time, which a
command can. So a file whose ctime falls in the second of the snapshot that recorded it is read
again by the next one.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentcli import untrusted
from agentcli.lifeline import process_alive
from agentcli.repo.git import Git, GitError

# An `--index-info` line with this mode and object removes the path (the repositories are SHA-1).
_REMOVE = "0 " + "0" * 40
# The most of a user's index read: a larger one (or a sparse file planted there) counts as unreadable.
_MAX_INDEX = 1 << 30
_PREFIX = "agentcli-stat-"
# The mode of an entry that records a nested repository's commit (a gitlink).
GITLINK = "160000"
# The commit recorded for a nested repository that has none: a gitlink names no object git must hold,
# and this one (the empty tree's id) is no commit of any repository.
_UNBORN = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_lock = threading.Lock()
_folder: Path | None = None
_caches: dict[tuple[str, tuple[str, ...]], _Cache] = {}


@dataclass
class _Cache:
    index: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Paths whose stat data was taken in the second they last changed: read again next time.
    recent: set[str] = field(default_factory=set)


def snapshot_tree(git: Git, exclude: tuple[str, ...] = ()) -> str:
    """The tree of the working tree as it is now (tracked, modified and untracked files, less
    `exclude`, whose entries keep the user's blob), written through agentcli's own index.

    What changed is listed by `ls-files` and recorded by `update-index`, not `git add -A`: add runs
    `git status` inside every nested repository, whose settings (a filter, an fsmonitor) the sandbox
    wrote; ls-files and update-index only read a nested repository's HEAD.
    """
    cache = _cache_for(git, exclude)
    with cache.lock:
        try:
            return _snapshot(git, exclude, cache)
        except GitError:
            # Objects only agentcli's index named can be gone (`git gc --prune=now`): start afresh once.
            cache.index.unlink(missing_ok=True)
            cache.recent.clear()
            return _snapshot(git, exclude, cache)


def _snapshot(git: Git, exclude: tuple[str, ...], cache: _Cache) -> str:
    started = int(time.time())
    env = {"GIT_INDEX_FILE": str(cache.index)}
    pathspec = ["--", ".", *(f":(exclude,literal){path}" for path in exclude)]
    users = _users_entries(git, cache.index)
    taken = _take_entries(git, env, users, exclude, cache.recent)
    listing = git("ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard", *pathspec, env=env)
    listed = [path for path in listing.split("\0") if path]
    # Entries just taken carry no stat data: recording them now spares the next snapshot reading them.
    changed = sorted({path for path in listed if not path.endswith("/")} | taken)
    if changed:
        git("update-index", "--add", "--remove", "-z", "--stdin", env=env, input="\0".join(changed) + "\0")
    # A tracked file a nested repository replaced lost its entry above, and was no untracked folder.
    files = (path for path in changed if path in users and users[path][0].split()[0] != GITLINK)
    replaced = [path for path in files if _is_repository(git.root, path)]
    for nested in [*(path.rstrip("/") for path in listed if path.endswith("/")), *replaced]:
        _add_nested(git, env, nested)
    # Untracked files' entries go before the next snapshot (which reads them again) whatever their times.
    cache.recent = {path for path in changed if path in users and _changed_since(git.root, path, started)}
    return git("write-tree", env=env)


def _add_nested(git: Git, env: dict[str, str], path: str) -> None:
    """Record the nested repository at `path` as its commit (a gitlink), or, where it has none yet (`git
    init` and nothing more), as `_UNBORN`: git cannot add it, and leaving it out would leave it behind
    when the tree is put back."""
    if git.try_("update-index", "--add", "--", path, env=env) is None:
        git("update-index", "-z", "--index-info", env=env, input=f"{GITLINK} {_UNBORN} 0\t{path}\0")


def _is_repository(root: Path, path: str) -> bool:
    found = untrusted.lstat(root, path)
    return found is not None and stat.S_ISDIR(found.st_mode) and untrusted.lstat(root, f"{path}/.git") is not None


def _changed_since(root: Path, path: str, second: int) -> bool:
    """Whether `path` changed in or after `second`; True where it cannot be read (moved away for the
    moment it was looked at, it may be back with a change of the same second)."""
    found = untrusted.lstat(root, path)
    return found is None or int(found.st_ctime) >= second


def _cache_for(git: Git, exclude: tuple[str, ...]) -> _Cache:
    """agentcli's own index for this repository (one per set of excluded paths), in a private folder
    removed when the process ends (and by the next process, where this one was killed)."""
    global _folder
    with _lock:
        if _folder is None:
            _remove_orphans()
            _folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
            atexit.register(shutil.rmtree, _folder, True)
        key = (str(git.git_dir.resolve()), exclude)
        if key not in _caches:
            _caches[key] = _Cache(_folder / f"index-{len(_caches)}")
        return _caches[key]


def _remove_orphans() -> None:
    """Remove this user's folders of processes that no longer run (killed before they could)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name.removeprefix(_PREFIX).split("-", 1)[0]
        with contextlib.suppress(OSError):
            if pid.isdigit() and folder.lstat().st_uid == os.geteuid() and not process_alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)


def _users_entries(git: Git, beside: Path) -> dict[str, list[str]]:
    """The user's index, read from a copy (never through a link): each path with its entries ("mode blob
    stage"). An index that is missing, too large or unreadable tracks nothing."""
    copy = beside.with_name(beside.name + ".users")
    try:
        data = untrusted.read_bytes(git.git_dir, "index", limit=_MAX_INDEX)
        if len(data) >= _MAX_INDEX:
            return {}
        copy.write_bytes(data)
        return _entries(git, copy)
    except (OSError, GitError):
        return {}
    finally:
        copy.unlink(missing_ok=True)


def _entries(git: Git, index: Path) -> dict[str, list[str]]:
    """Each path of an index with its entries ("mode blob stage"), in order."""
    if not index.exists():
        return {}
    listing = git("ls-files", "-s", "-z", env={"GIT_INDEX_FILE": str(index)})
    entries: dict[str, list[str]] = {}
    for line in listing.split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            entries.setdefault(path, []).append(meta)
    return entries


def _take_entries(
    git: Git, env: dict[str, str], users: dict[str, list[str]], exclude: tuple[str, ...], recent: set[str]
) -> set[str]:
    """Make agentcli's index track what the user's index tracks, and return the paths to read afresh.

    An entry it has for such a path stays (its stat data is git's, for its own blob: `ls-files
    --modified` tells whether the file still holds it), unless its stat data was taken in the second
    the file last changed (`recent`). A path it lacks is set from the user's index, to be read. A path
    left out of snapshots keeps the user's blob and is never read (assume-unchanged, in this index
    only). Paths the user's index does not track go: they count as untracked."""
    own = _entries(git, Path(env["GIT_INDEX_FILE"]))
    lines = [f"{_REMOVE}\t{path}" for path in own if path not in users]
    taken, left_out = set(), []
    for path, metas in users.items():
        if any(path == e or path.startswith(e.rstrip("/") + "/") for e in exclude):
            if own.get(path) != metas:
                lines += [f"{_REMOVE}\t{path}", *(f"{meta}\t{path}" for meta in metas)]
                left_out.append(path)
        elif path not in own or path in recent:
            lines += [f"{_REMOVE}\t{path}", *(f"{meta}\t{path}" for meta in metas)]
            taken.add(path)
    if lines:
        git("update-index", "-z", "--index-info", env=env, input="\0".join(lines) + "\0")
    if left_out:
        git("update-index", "-z", "--assume-unchanged", "--stdin", env=env, input="\0".join(left_out) + "\0")
    return taken
