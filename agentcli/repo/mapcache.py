"""A per-repository disk cache of file tags, keyed by path, mtime and size.

One JSON file per repository under `cache_dir()/repomap/`, named by a hash of the repository's
resolved path. It is rewritten (atomically) only when something changed, and keeps only the files
seen in the latest run, so it never grows with deleted files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from agentcli.paths import cache_dir
from agentcli.repo.tagqueries import QUERIES_VERSION
from agentcli.repo.tags import Definition, FileTags

log = logging.getLogger(__name__)
_definition = Definition._make

FORMAT = f"repomap-1-q{QUERIES_VERSION}"
MAX_REPOSITORIES = 200  # cache files kept; the least recently written go first (temporary checkouts pile up)
SKIPPED = "skipped"  # a file seen and left out (binary, unparsable): not read again until it changes


def cache_path(root: Path) -> Path:
    """Where the tags of the repository at `root` are kept."""
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:20]
    return cache_dir() / "repomap" / f"{digest}.json"


class TagCache:
    """Tags of files by relative path, valid while the file's mtime and size are unchanged."""

    def __init__(self, path: Path | None, root: Path):
        self.path = path
        self.root = str(root)
        self._old: dict[str, list[Any]] = self._load() if path else {}
        self._new: dict[str, list[Any]] = {}
        self._changed = False

    def _load(self) -> dict[str, list[Any]]:
        assert self.path is not None
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.debug("repository map cache %s unreadable, starting afresh: %s", self.path, e)
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("root") != self.root:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def get(self, rel: str, mtime_ns: int, size: int) -> FileTags | str | None:
        """The cached tags, `SKIPPED`, or None when the file is new or changed."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != mtime_ns or entry[1] != size:
            return None
        self._new[rel] = entry
        if entry[2] is None:
            return SKIPPED
        try:
            return FileTags(entry[2], entry[3], list(map(_definition, entry[4])), entry[5])
        except (TypeError, IndexError):
            self._new.pop(rel, None)
            return None

    def put(self, rel: str, mtime_ns: int, size: int, tags: FileTags | None) -> None:
        """Remember a parsed file, or (with None) one that was skipped."""
        self._changed = True
        if tags is None:
            self._new[rel] = [mtime_ns, size, None]
        else:
            defs = [list(d) for d in tags.definitions]
            self._new[rel] = [mtime_ns, size, tags.language, tags.lines, defs, tags.references]

    def save(self) -> None:
        """Write the entries seen in this run, if any was added or one disappeared."""
        if self.path is None or (not self._changed and len(self._new) == len(self._old)):
            return
        data = {"format": FORMAT, "root": self.root, "files": self._new}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(data, f, separators=(",", ":"), ensure_ascii=False)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
            _prune(self.path.parent, MAX_REPOSITORIES)
        except OSError as e:  # a read-only cache dir costs speed, never the map
            log.debug("repository map cache not saved to %s: %s", self.path, e)


def _prune(folder: Path, keep: int) -> None:
    """Delete all but the `keep` most recently written cache files."""
    entries = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.endswith(".json") and not entry.name.startswith("."):
                try:
                    entries.append((entry.stat().st_mtime_ns, entry.path))
                except OSError:
                    continue
    if len(entries) <= keep:
        return
    entries.sort(reverse=True)
    for _, path in entries[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(path)
