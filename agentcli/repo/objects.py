"""Objects the sandbox wrote into the repository, checked before agentcli reads them on the host.

git never checks, when it reads an object, that its content is what its name says, and never writes
an object it already holds. So a loose object planted under the name of content a command is about to
write, holding other content, would make agentcli's snapshot, the diff it shows, the branch it
commits and `undo` all read the planted bytes. Every file of the object store whose change time
(which no command can set back) falls after the checkpoint is checked, and every file of a folder
that changed since or is not the folder there was (one renamed into place keeps its files' times): a
loose object must hash to its name, a pack must pass `git verify-pack`. A failing loose object is
removed, a failing pack moved aside; the checkpoint's objects come back from the mirror. Files that
describe objects and history rather than hold them (commit-graph, multi-pack-index,
`info/alternates`, `info/packs`, bitmaps) written since are removed: git rebuilds them or does
without.
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
_DESCRIPTIONS = ("info/alternates", "info/packs", "info/commit-graph", "info/commit-graphs")
# On a file system that keeps change times to the second, a change in the checkpoint's own second
# counts as after it.
_COARSE_SLACK_S = 1.0
# The folders whose identity a checkpoint records: a folder renamed into place keeps its files' old
# change times, so a folder that is not the one there was has all its files checked.
FOLDERS = ("objects", "objects/pack", "objects/info")
# Where a pack that fails the check is moved (in the git folder, out of the object store): it may be
# the run's own, or the user's caught mid-write by a git of theirs, and nothing is deleted unseen.
QUARANTINE = "agentcli-quarantine"
_CHUNK = 1 << 20


def folder_identities(git: Git) -> tuple[int, ...]:
    """The inode of each of `FOLDERS` of the git folder (0 where it is missing or a link)."""
    found = (untrusted.lstat(git.common_dir, folder) for folder in FOLDERS)
    return tuple(s.st_ino if s is not None and stat.S_ISDIR(s.st_mode) else 0 for s in found)


def remove_forged(git: Git, since: float, identities: tuple[int, ...] | None = None) -> list[str]:
    """Remove from the repository's object store what changed after `since` and is not what it claims
    to be (a failing pack is moved to `QUARANTINE`); the paths taken out, relative to the store.
    `identities`: the store's `folder_identities` at `since` (None: not recorded, trusted)."""
    store = git.common_dir / "objects"
    if store.is_symlink() or not store.is_dir():
        return []
    if store.lstat().st_ctime_ns % 1_000_000_000 == 0:
        since -= _COARSE_SLACK_S
    now = folder_identities(git)
    renamed = {folder for folder, old, new in zip(FOLDERS, identities or now, now, strict=True) if old != new}
    if "objects" in renamed:
        since = 0.0  # the whole store was swapped in: every file of it is checked
    removed = []
    for name in _DESCRIPTIONS:
        swapped = f"objects/{name.split('/')[0]}" in renamed
        if (swapped or _changed_after(store, name, since)) and untrusted.remove(store, name):
            removed.append(name)
    for folder in sorted(os.listdir(store)):
        found = untrusted.lstat(store, folder) if _LOOSE_FOLDER.fullmatch(folder) else None
        if found is not None and not stat.S_ISDIR(found.st_mode) and not stat.S_ISLNK(found.st_mode):
            removed += [folder] if untrusted.remove(store, folder) else []  # a file where git writes objects
        elif found is not None:
            whole = _changed_after(store, folder, since)  # a folder changed since: each of its files is checked
            for name in sorted(_listing(store, folder)):
                relative = f"{folder}/{name}"
                if (whole or _changed_after(store, relative, since)) and not _loose_is_sound(store, relative):
                    removed += [relative] if untrusted.remove(store, relative) else []
    removed += _remove_forged_packs(git, store, 0.0 if "objects/pack" in renamed else since)
    return removed


def _listing(store: Path, folder: str) -> list[str]:
    """The names in a folder of the store; none where it is a link or no folder."""
    found = untrusted.lstat(store, folder)
    if found is None or not stat.S_ISDIR(found.st_mode):
        return []
    try:
        return os.listdir(store / folder)
    except OSError:
        return []


def _changed_after(store: Path, relative: str, since: float) -> bool:
    found = untrusted.lstat(store, relative)
    return found is not None and found.st_ctime >= since


def _loose_is_sound(store: Path, relative: str) -> bool:
    """Whether the loose object at `relative` is a regular file whose content hashes to its name. It is
    inflated a chunk at a time, so a small file that inflates to gigabytes takes no memory for it."""
    folder, name = relative.split("/")
    if not _LOOSE_NAME.fullmatch(name):
        return True  # not an object (git's own temporary files): git never reads it as one
    digest = hashlib.sha1() if len(name) == 38 else hashlib.sha256()
    inflate = zlib.decompressobj()
    try:
        with untrusted.open_file(store, relative) as f:
            while chunk := f.read(_CHUNK):
                while chunk:
                    digest.update(inflate.decompress(chunk, _CHUNK))
                    chunk = inflate.unconsumed_tail
        digest.update(inflate.flush())
    except (OSError, zlib.error):
        return False
    return inflate.eof and digest.hexdigest() == folder + name


def _remove_forged_packs(git: Git, store: Path, since: float) -> list[str]:
    """Packs any of whose files changed after `since`: one that fails `git verify-pack` is moved whole to
    `QUARANTINE`; of one that passes, a bitmap or reverse index changed since goes (each describes the
    pack, unchecked)."""
    groups: dict[str, list[str]] = {}
    removed = []
    for name in sorted(_listing(store, "pack")):
        if name.startswith("pack-") and "." in name:
            groups.setdefault(name.split(".", 1)[0], []).append(f"pack/{name}")
        elif _changed_after(store, f"pack/{name}", since) and untrusted.remove(store, f"pack/{name}"):
            removed.append(f"pack/{name}")  # a multi-pack index (or its `.d` chain), which maps ids to packs
    for base, files in groups.items():
        changed = [f for f in files if _changed_after(store, f, since)]
        if not changed:
            continue
        index = store / "pack" / f"{base}.idx"
        sound = all(_is_regular(store, f) for f in files) and git.try_("verify-pack", str(index)) is not None
        if sound:
            removed += [f for f in changed if f.endswith((".bitmap", ".rev")) and untrusted.remove(store, f)]
        else:
            removed += [f for f in files if _quarantine(git, store, f)]
    return removed


def _quarantine(git: Git, store: Path, relative: str) -> bool:
    """Move a file of the store to `QUARANTINE` in the git folder (a link or other odd file just goes)."""
    if not _is_regular(store, relative):
        return untrusted.remove(store, relative)
    folder = git.common_dir / QUARANTINE
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        untrusted.remove(git.common_dir, QUARANTINE)
    folder.mkdir(exist_ok=True)
    os.replace(store / relative, folder / relative.rsplit("/", 1)[-1])
    return True


def _is_regular(store: Path, relative: str) -> bool:
    found = untrusted.lstat(store, relative)
    return found is not None and stat.S_ISREG(found.st_mode)
