"""What one command changed in the work tree: a snapshot before it, and each text file that differs after.

Both sides are read from snapshots (git trees written through agentcli's own index, see repo.snapshot),
never by following a path in the work tree, so a link or a file the sandbox swaps in changes nothing here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from agentcli.repo.git import Git, GitError
from agentcli.repo.snapshot import snapshot_tree

# Files a tool writes beside the code (caches), which say nothing of the change the model made.
_CACHE_FOLDERS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
# An entry that is no regular file (a link, a nested repository's commit) has no text to show.
_FILE_MODES = frozenset({"100644", "100755"})
_NO_BLOB = "0" * 40


class FileChange(NamedTuple):
    """One file as it was before a command and after it: None where it did not exist."""

    path: str
    before: str | None
    after: str | None


class TreeChanges:
    """Marks of the work tree, and the text files that changed since one; `exclude`: the paths left out of
    the snapshots now (agentcli's own files in the work tree, which change from task to task)."""

    def __init__(self, root: Path, exclude: Callable[[], tuple[str, ...]] = tuple):
        self.root, self.exclude = root, exclude

    def mark(self) -> str | None:
        """The work tree as it is now; None where git cannot say."""
        try:
            return snapshot_tree(Git(self.root), self.exclude())
        except (GitError, OSError):
            return None

    def since(self, mark: str, *, files: int = 5, limit: int = 100_000) -> list[FileChange]:
        """Up to `files` text files (of `limit` bytes at most on each side) that differ from `mark`."""
        now = self.mark()
        if now is None or now == mark:
            return []
        git = Git(self.root)
        try:
            fields = git.raw("diff-tree", "-r", "--no-renames", "--raw", "-z", mark, now).split(b"\0")
        except GitError:
            return []
        changes = []
        # --raw -z: ":old-mode new-mode old-blob new-blob status", then the path, for each file.
        for info, raw_path in zip(fields[0::2], fields[1::2], strict=False):
            if len(changes) == files:
                break
            with contextlib.suppress(UnicodeDecodeError, ValueError):
                old_mode, new_mode, old_blob, new_blob, _ = info.decode().lstrip(":").split(" ")
                path = raw_path.decode()
                if _CACHE_FOLDERS.intersection(path.split("/")):
                    continue
                before = _text(git, old_blob, old_mode, limit)
                after = _text(git, new_blob, new_mode, limit)
                if (before is not None or old_blob == _NO_BLOB) and (after is not None or new_blob == _NO_BLOB):
                    changes.append(FileChange(path, before, after))
        return changes


def _text(git: Git, blob: str, mode: str, limit: int) -> str | None:
    """The blob's text; None for no blob, no regular file, more than `limit` bytes, or bytes that are no text."""
    if blob == _NO_BLOB or mode not in _FILE_MODES:
        return None
    data = git.blob_within(blob, limit)
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None
