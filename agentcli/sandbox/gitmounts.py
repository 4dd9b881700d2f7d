"""What of `.git` the sandbox may change: its objects and refs (so the model can commit), not what makes git run things.

Backends with a filesystem of their own mount the repository's `.git` folder over itself (a mount
point cannot be renamed or removed, so `.git` cannot be swapped for one the sandbox wrote) and its
`config`, `hooks/`, `info/` and `modules/` (the submodules' git folders) read-only on top, with the
`.git` files of the submodules' work trees: no filter, fsmonitor or hook planted in the sandbox
reaches agentcli's own git calls or the user's next git command. A `.git` file (a linked work tree)
is mounted read-only as a whole. What remains writable and is read as settings (`.git/commondir`)
is removed after the run (`checkpoint.remove_planted`).
"""

from __future__ import annotations

import contextlib
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agentcli import untrusted
from agentcli.errors import UsageError

# Parts of the git folder that name programs git runs.
READ_ONLY = ("config", "hooks", "info", "modules", "worktrees", "config.worktree")
# Of those, the folders made where missing: absent, they would be the sandbox's to create.
MADE = ("hooks", "info", "modules")


@dataclass
class GitMounts:
    """Host paths to mount over themselves: read-write (for the mount point) and read-only."""

    writable: list[Path] = field(default_factory=list)
    read_only: list[Path] = field(default_factory=list)


def git_mounts(repo: Path) -> GitMounts:
    """The mounts that protect `repo`'s git settings. A link where one of them should be (planted
    by an earlier run: it would mount what it points to into the sandbox) stops the run."""
    dot = repo / ".git"
    if dot.is_symlink() or not dot.exists():
        return GitMounts()
    if not dot.is_dir():
        return GitMounts(read_only=[dot])
    for name in MADE:
        with contextlib.suppress(FileExistsError):
            (dot / name).mkdir()
    read_only = []
    for name in READ_ONLY:
        found = untrusted.lstat(dot, name)
        if found is None:
            continue
        if stat.S_ISLNK(found.st_mode) or not (stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode)):
            raise UsageError(f"{dot / name} is not a plain {'file' if '.' in name else 'folder'}: remove it")
        read_only.append(dot / name)
    read_only += _submodule_gitfiles(repo)
    return GitMounts(writable=[dot], read_only=read_only)


def _submodule_gitfiles(repo: Path) -> list[Path]:
    """The `.git` files of checked-out submodules named in `.gitmodules` (each points git at a folder
    of settings: rewritten, it would point elsewhere)."""
    text = untrusted.try_read_text(repo, ".gitmodules") or ""
    found = []
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "path" and value.strip():
            gitfile = repo / value.strip() / ".git"
            # No link anywhere on the way: the path must resolve to itself.
            if untrusted.is_file(repo, f"{value.strip()}/.git") and gitfile.resolve() == gitfile.absolute():
                found.append(gitfile)
    return found
