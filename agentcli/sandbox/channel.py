"""The control channel: the folder where the host hands the sandbox's shell its commands and reads their output.

It lives in agentcli's state directory, outside the repository, and is mounted into the sandbox at a
path of its own; the sandbox can write there (outputs and markers), so every host-side access goes
through one directory file descriptor opened when the session starts, with O_NOFOLLOW, and new files
are created with O_EXCL after removing whatever was planted under their name. A link planted as
`0007.sh` or `0007.out` is never followed: a command file replaces it, an output file that is not a
regular file reads as empty.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from agentcli.untrusted import NEW_FILE, NotAFile, open_read

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
# The outputs of this many recent commands stay for the model to read again; older ones are removed.
KEPT_OUTPUTS = 20
# Files the shell leaves per command.
_PER_COMMAND = (".sh", ".out", ".timeout", ".interrupt", ".syntax")


class Channel:
    """One session's control folder, held open by a directory file descriptor."""

    def __init__(self, host: Path):
        self.host = host
        self._fd: int | None = None

    def open(self) -> None:
        if self._fd is not None:
            return
        self.host.mkdir(parents=True, exist_ok=True, mode=0o755)
        self._fd = os.open(self.host, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise RuntimeError("the control channel is not open")
        return self._fd

    def _clear(self, name: str) -> None:
        """Remove whatever is at `name` (a link itself, not its target; a planted folder is moved aside)."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass
        except (IsADirectoryError, PermissionError):
            with contextlib.suppress(OSError):
                os.rename(name, f".planted-{secrets.token_hex(4)}", src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def _reclaim(self) -> None:
        """Give the folder back its permissions, which a command inside may have taken (`chmod 000`)."""
        with contextlib.suppress(OSError):
            os.fchmod(self.fd, 0o755)

    def create(self, name: str, data: bytes) -> None:
        """Write a new regular file, never through anything that was at `name` before."""
        for tries in range(3):
            if tries:
                self._reclaim()
            self._clear(name)
            try:
                fd = os.open(name, NEW_FILE, 0o644, dir_fd=self.fd)
            except (FileExistsError, PermissionError):
                continue  # planted again between the two calls, or the folder made unwritable
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return
        raise OSError(errno.EEXIST, "the sandbox keeps replacing a control file", name)

    def exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            return False
        return True

    def read_head_tail(self, name: str, limit: int) -> tuple[str, int, bool]:
        """(text, total bytes, truncated) of an output file; empty when it is missing or not a regular file."""
        try:
            fd = open_read(self.fd, name)
        except PermissionError:
            self._reclaim()
            try:
                fd = open_read(self.fd, name)
            except OSError:
                return "", 0, False
        except (FileNotFoundError, NotAFile):
            return "", 0, False
        with os.fdopen(fd, "rb") as f:
            return read_head_tail(f, limit)

    def make_fifo(self, name: str) -> int:
        """A new FIFO at `name`, opened read-write and non-blocking (so neither end ever blocks)."""
        self._clear(name)
        os.mkfifo(name, 0o600, dir_fd=self.fd)
        fd = os.open(name, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.close(fd)
            raise NotAFile(errno.EINVAL, "not a FIFO", name)
        return fd

    def remove(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=self.fd)

    def forget(self, cid: int) -> None:
        """Remove the files of command number `cid`."""
        for suffix in _PER_COMMAND:
            self.remove(f"{cid:04d}{suffix}")

    def chown(self, uid: int, gid: int, names: tuple[str, ...] = ()) -> None:
        """Hand the folder (and `names` in it) to the sandbox's user, where agentcli runs as root and the
        commands do not."""
        os.chown(self.fd, uid, gid)
        for name in names:
            with contextlib.suppress(OSError):
                os.chown(name, uid, gid, dir_fd=self.fd, follow_symlinks=False)


def read_head_tail(f, limit: int) -> tuple[str, int, bool]:
    """Read an open file's text for the model: all of it when short, else its head and tail.

    Reads at most `limit` bytes from each end however large the file is, so memory stays flat.
    Returns (text, total bytes, truncated).
    """
    total = os.fstat(f.fileno()).st_size
    if total <= limit:
        return clean_output(f.read(limit)), total, False
    half = limit // 2
    head = f.read(half)
    f.seek(total - half)
    tail = f.read(half)
    head = head[: head.rfind(b"\n") + 1] or head
    nl = tail.find(b"\n")
    tail = tail[nl + 1 :] if 0 <= nl < len(tail) - 1 else tail
    omitted = total - len(head) - len(tail)
    marker = f"\n[... {omitted} bytes omitted ...]\n".encode()
    return clean_output(head + marker + tail), total, True


def clean_output(data: bytes) -> str:
    """Decode output for the model: drop colour codes, keep only the last state of \\r-redrawn lines."""
    data = _ANSI.sub(b"", data)
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return text
