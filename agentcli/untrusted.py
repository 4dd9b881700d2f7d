"""Reading and writing where the sandbox can write, without following what it planted there.

The repository and the control channel are the sandbox's to change: any path under them may have
become a symbolic link to a host file, a FIFO that blocks its reader, or a directory swapped for a
link. Host-side code reaches such paths only through here: component by component from a directory
file descriptor with O_NOFOLLOW, so a link anywhere on the way is refused instead of followed, and
only regular files are read or written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class NotAFile(OSError):
    """The path is a link, a FIFO, a device or a socket where a regular file was expected."""


def _parts(relative: str | Path) -> list[str]:
    parts = [p for p in Path(relative).parts if p not in ("", ".")]
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise NotAFile(errno.EINVAL, "not a path inside the directory", str(relative))
    return parts


@contextlib.contextmanager
def _parent(
    root: Path, relative: str | Path, *, create: bool = False, owner: tuple[int, int] | None = None
) -> Iterator[tuple[int, str]]:
    """(fd of the directory holding `relative`'s last part, that part), reached without following links;
    `create` makes missing folders, given to `owner` (uid, gid) when set."""
    parts = _parts(relative)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                if owner is not None:
                    os.fchown(child, *owner)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotAFile(e.errno, "a link or a file on the way", str(relative)) from None
                raise
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


def open_read(directory_fd: int, name: str) -> int:
    """An fd for reading the regular file `name` in an open directory; NotAFile for anything else."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=directory_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotAFile(e.errno, "a symbolic link", name) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotAFile(errno.EINVAL, "not a regular file", name)
    return fd


def open_file(root: Path, relative: str | Path) -> BinaryIO:
    """A regular file under `root`, open for reading."""
    with _parent(root, relative) as (directory, name):
        return os.fdopen(open_read(directory, name), "rb")


def read_bytes(root: Path, relative: str | Path, limit: int | None = None) -> bytes:
    """The content of a regular file under `root` (at most `limit` bytes)."""
    with open_file(root, relative) as f:
        return f.read() if limit is None else f.read(limit)


def read_text(root: Path, relative: str | Path, limit: int | None = None) -> str:
    return read_bytes(root, relative, limit).decode("utf-8", errors="replace")


# The most `try_read_text` reads: a check of the sandbox's files never holds a huge (or sparse) one.
TEXT_LIMIT = 8 << 20


def try_read_text(root: Path, relative: str | Path, limit: int = TEXT_LIMIT) -> str | None:
    """The text of a regular file under `root`; None when it is missing, a link, not a file, or
    larger than `limit` bytes."""
    try:
        data = read_bytes(root, relative, limit + 1)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if len(data) <= limit else None


def write_bytes(
    root: Path, relative: str | Path, data: bytes, *, mode: int = 0o644, owner: tuple[int, int] | None = None
) -> bool:
    """Write a regular file under `root`, making its folders; True when the file is new. What is made
    new belongs to `owner` (uid, gid) when set.

    An existing link, FIFO or device at the path is refused (NotAFile), never written through.
    """
    with _parent(root, relative, create=True, owner=owner) as (directory, name):
        try:
            fd, created = os.open(name, NEW_FILE, mode, dir_fd=directory), True
        except FileExistsError:
            fd, created = _open_existing(directory, name, str(relative)), False
    if created and owner is not None:
        os.fchown(fd, *owner)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return created


def _open_existing(directory: int, name: str, shown: str) -> int:
    """An existing regular file, opened for writing and emptied."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO):
            raise NotAFile(e.errno, "a symbolic link or a FIFO", shown) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotAFile(errno.EINVAL, "not a regular file", shown)
    os.ftruncate(fd, 0)
    return fd


def write_text(root: Path, relative: str | Path, text: str, *, owner: tuple[int, int] | None = None) -> bool:
    return write_bytes(root, relative, text.encode("utf-8"), owner=owner)


def lstat(root: Path, relative: str | Path) -> os.stat_result | None:
    """The path's own status (a link is not followed), or None where it or a folder on the way is missing."""
    try:
        with _parent(root, relative) as (directory, name):
            return os.stat(name, dir_fd=directory, follow_symlinks=False)
    except OSError:
        return None


def is_file(root: Path, relative: str | Path) -> bool:
    """A regular file, reached without following any link."""
    found = lstat(root, relative)
    return found is not None and stat.S_ISREG(found.st_mode)


def remove(root: Path, relative: str | Path) -> bool:
    """Remove a file, a link (never what it points to) or a folder with all it holds; False when there
    was nothing to remove under `root` (a link on the way leads outside it)."""
    try:
        with _parent(root, relative) as (directory, name):
            found = os.stat(name, dir_fd=directory, follow_symlinks=False)
            if stat.S_ISDIR(found.st_mode):
                _remove_tree(directory, name)
            else:
                os.unlink(name, dir_fd=directory)
    except (FileNotFoundError, NotAFile):
        return False
    return True


def _remove_tree(parent: int, name: str) -> None:
    """Remove folder `name` of the open folder `parent`, descending by file descriptors only."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    try:
        for entry in os.listdir(fd):
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                _remove_tree(fd, entry)
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def give_to(root: Path, relative: str | Path, owner: tuple[int, int]) -> None:
    """Make `owner` (uid, gid) the owner of the file or folder at `relative` (never of a link's target);
    nothing where the path leads through a link or is gone."""
    with contextlib.suppress(FileNotFoundError, NotAFile), _parent(root, relative) as (directory, name):
        os.chown(name, *owner, dir_fd=directory, follow_symlinks=False)


def remove_empty_folders(root: Path, relative: str | Path) -> None:
    """Remove the folder at `relative` and then its parents, up to `root`, while they are empty."""
    parts = list(Path(relative).parts)
    while parts:
        try:
            with _parent(root, Path(*parts)) as (directory, name):
                os.rmdir(name, dir_fd=directory)
        except OSError:
            return
        parts.pop()
