"""Objects the sandbox wrote into the repository, checked before agentcli reads them on the host.

git never checks, when it reads an object, that its content is what its name says, and never writes
an object it already holds. So a loose object planted under the name of content a command is about to
write, holding other content, would make agentcli's snapshot, the diff it shows, the branch it
commits and `undo` all read the planted bytes. Every file of the object store whose change time
(which no command can set back) falls after the checkpoint is checked: a loose object must hash to its
name, a pack must pass `git verify-pack`; what fails is removed, and the checkpoint's own objects
come back from the mirror. Files that describe objects and history rather than hold them
(commit-graph, multi-pack-index, `info/alternates`, `info/packs`) written since are removed: git
rebuilds them or does without.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import zlib
from pathlib import Path

from agentcli import untrusted
from agentcli.repo.git import Git

_LOOSE_FOLDER = re.compile(r"[0-9a-f]{2}")
_LOOSE_NAME = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
# Files of the object store that only describe objects: removed when written since the checkpoint.
_DESCRIPTIONS = ("info/alternates", "info/packs", "info/commit-graph", "info/commit-graphs", "pack/multi-pack-index")
# A change time this close before the checkpoint counts as after it (the clocks agree; rounding may not).
_SLACK_S = 1.0


def remove_forged(git: Git, since: float) -> list[str]:
    """Remove from the repository's object store what changed after `since` and is not what it claims
    to be; the paths removed, relative to the store."""
    store = git.common_dir / "objects"
    if store.is_symlink() or not store.is_dir():
        return []
    since -= _SLACK_S
    removed = [name for name in _DESCRIPTIONS if _changed_after(store, name, since) and untrusted.remove(store, name)]
    for folder in sorted(os.listdir(store)):
        if _LOOSE_FOLDER.fullmatch(folder) and not (store / folder).is_symlink() and (store / folder).is_dir():
            for name in sorted(os.listdir(store / folder)):
                relative = f"{folder}/{name}"
                if _changed_after(store, relative, since) and not _loose_is_sound(store, relative):
                    removed += [relative] if untrusted.remove(store, relative) else []
    removed += _remove_forged_packs(git, store, since)
    return removed


def _changed_after(store: Path, relative: str, since: float) -> bool:
    found = untrusted.lstat(store, relative)
    return found is not None and found.st_ctime >= since


def _loose_is_sound(store: Path, relative: str) -> bool:
    """Whether the loose object at `relative` is a regular file whose content hashes to its name."""
    folder, name = relative.split("/")
    if not _LOOSE_NAME.fullmatch(name):
        return True  # not an object (git's own temporary files): git never reads it as one
    digest = hashlib.sha1() if len(name) == 38 else hashlib.sha256()
    inflate = zlib.decompressobj()
    try:
        with untrusted.open_file(store, relative) as f:
            while chunk := f.read(1 << 20):
                digest.update(inflate.decompress(chunk))
        digest.update(inflate.flush())
    except (OSError, zlib.error):
        return False
    return inflate.eof and digest.hexdigest() == folder + name


def _remove_forged_packs(git: Git, store: Path, since: float) -> list[str]:
    """Packs any of whose files changed after `since`: one that fails `git verify-pack` goes whole; of one
    that passes, a bitmap or reverse index changed since goes (each describes the pack, unchecked)."""
    packs = store / "pack"
    if packs.is_symlink() or not packs.is_dir():
        return []
    groups: dict[str, list[str]] = {}
    for name in sorted(os.listdir(packs)):
        if name.startswith("pack-") and "." in name:
            groups.setdefault(name.split(".", 1)[0], []).append(f"pack/{name}")
    removed = []
    for base, files in groups.items():
        changed = [f for f in files if _changed_after(store, f, since)]
        if not changed:
            continue
        index = store / "pack" / f"{base}.idx"
        sound = all(_is_regular(store, f) for f in files) and git.try_("verify-pack", str(index)) is not None
        doubtful = [f for f in changed if f.endswith((".bitmap", ".rev"))] if sound else files
        removed += [relative for relative in doubtful if untrusted.remove(store, relative)]
    return removed


def _is_regular(store: Path, relative: str) -> bool:
    found = untrusted.lstat(store, relative)
    return found is not None and stat.S_ISREG(found.st_mode)
