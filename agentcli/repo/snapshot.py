"""The tree of the work tree as it is now, read without trusting what the sandbox can write in `.git/index`.

git decides which files changed from the stat data its index keeps, and skips entries flagged
`assume-unchanged` or `skip-worktree`. The user's index is the sandbox's to write: one command
(`git update-index --assume-unchanged f`), or an index written with a changed file's stat data, would
hide a change from the diff and from `undo`. So a snapshot takes only which paths are tracked, and
their blobs, from the user's index; the stat data comes from an index of agentcli's own, in a private
folder, that git on the host wrote from the files themselves. Git's own rule for files changed within
the second the index was written ("racily clean") holds there, since that index is never copied.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from agentcli.repo.git import Git

_ZERO = "0" * 40
_lock = threading.Lock()
_folder: Path | None = None
_caches: dict[tuple[str, tuple[str, ...]], tuple[Path, threading.Lock]] = {}


def snapshot_tree(git: Git, exclude: tuple[str, ...] = ()) -> str:
    """The tree of the working tree as it is now (tracked, modified and untracked files, less
    `exclude`), written through agentcli's own index for this repository.

    What changed is listed by `ls-files` and recorded by `update-index`, not `git add -A`: add runs
    `git status` inside every nested repository, whose settings (a filter, an fsmonitor) the sandbox
    wrote; ls-files and update-index only read a nested repository's HEAD.
    """
    index, lock = _cache_for(git, exclude)
    env = {"GIT_INDEX_FILE": str(index)}
    pathspec = ["--", ".", *(f":(exclude,literal){path}" for path in exclude)]
    with lock:
        if _take_entries(git, env, _entries(git, _users_index_copy(git, index)), exclude):
            # Entries set without stat data: record it now, so later snapshots need not read them again.
            git.try_("update-index", "-q", "--refresh", env=env)
        listing = git("ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard", *pathspec, env=env)
        changed = sorted({path.rstrip("/") for path in listing.split("\0") if path})
        if changed:
            git("update-index", "--add", "--remove", "-z", "--stdin", env=env, input="\0".join(changed) + "\0")
        return git("write-tree", env=env)


def _cache_for(git: Git, exclude: tuple[str, ...]) -> tuple[Path, threading.Lock]:
    """agentcli's own index for this repository (one per set of excluded paths), in a private folder
    removed when the process ends."""
    global _folder
    with _lock:
        if _folder is None:
            _folder = Path(tempfile.mkdtemp(prefix="agentcli-stat-"))
            atexit.register(shutil.rmtree, _folder, True)
        key = (str(git.git_dir.resolve()), exclude)
        if key not in _caches:
            _caches[key] = (_folder / f"index-{len(_caches)}", threading.Lock())
        return _caches[key]


def _users_index_copy(git: Git, beside: Path) -> Path | None:
    """A copy of the user's index, read as data (never through a link), or None where there is none."""
    from agentcli import untrusted

    copy = beside.with_name(beside.name + ".users")
    try:
        copy.write_bytes(untrusted.read_bytes(git.git_dir, "index"))
    except OSError:
        return None
    return copy


def _entries(git: Git, index: Path | None) -> dict[str, list[str]]:
    """Each path of an index with its entries ("mode blob stage"), in order."""
    if index is None or not index.exists():
        return {}
    listing = git("ls-files", "-s", "-z", env={"GIT_INDEX_FILE": str(index)})
    entries: dict[str, list[str]] = {}
    for line in listing.split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            entries.setdefault(path, []).append(meta)
    return entries


def _take_entries(git: Git, env: dict[str, str], users: dict[str, list[str]], exclude: tuple[str, ...]) -> bool:
    """Make agentcli's index track what the user's index tracks. An entry it has for such a path stays
    (its stat data is git's, for its own blob: `ls-files --modified` tells whether the file still
    holds that blob); a path it lacks, or one left out of snapshots (which keeps the user's blob), is
    set from the user's index without stat data, so git reads the file itself. Paths the user's
    index does not track go: they count as untracked. Whether any entry was set."""
    own = _entries(git, Path(env["GIT_INDEX_FILE"]))
    removed = [f"0 {_ZERO}\t{path}" for path in own if path not in users]
    taken = []
    for path, metas in users.items():
        left_out = any(path == e or path.startswith(e.rstrip("/") + "/") for e in exclude)
        if path not in own or (left_out and own[path] != metas):
            removed += [f"0 {_ZERO}\t{path}"] if path in own else []
            taken += [f"{meta}\t{path}" for meta in metas]
    if removed or taken:
        git("update-index", "-z", "--index-info", env=env, input="\0".join(removed + taken) + "\0")
    return bool(taken)
