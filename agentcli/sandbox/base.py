"""The `Sandbox` protocol and the `Observation` a command produces."""

from __future__ import annotations

import posixpath
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# Where the control channel is mounted inside sandboxes that have a filesystem of their own.
CHANNEL_INSIDE = "/run/agentcli/commands"


@dataclass
class Observation:
    """The result of one command.

    `output` is what the model sees: stdout and stderr interleaved, cut to head and tail when long.
    `output_path` is where the full output can be read back *inside* the sandbox.
    """

    command: str
    exit_code: int
    output: str
    duration: float
    total_bytes: int = 0
    truncated: bool = False
    output_path: str | None = None
    timed_out: bool = False
    syntax_error: bool = False
    killed_reason: str | None = None  # e.g. "out of memory", "shell restarted"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Sandbox(Protocol):
    """Runs shell commands for one session; `cd`, variables and venvs persist between commands."""

    name: str
    workdir: str  # the repository's path as commands see it

    def start(self) -> None: ...

    def run(self, command: str, timeout: float | None = None) -> Observation: ...

    def read_file(self, path: str) -> str:
        """Read a file by its path inside the sandbox (relative paths are under `workdir`)."""
        ...

    def write_file(self, path: str, content: str) -> None: ...

    def frozen(self) -> AbstractContextManager[None]:
        """Every process in the sandbox stopped for the block (agentcli's own writes to `.git` must not
        race one the model left running)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(self, *exc: object) -> None: ...


class SandboxUnavailable(Exception):
    """The backend cannot run here (missing binary, engine down)."""


def repo_relative(workdir: str, path: str) -> str | None:
    """A path as the sandbox sees it, relative to the repository; None when it is outside."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    try:
        relative = p.relative_to(workdir)
    except ValueError:
        return None
    return str(relative) if relative.parts else None


def shell_paths(sandbox: Sandbox, paths: list[str]) -> list[str | None]:
    """`paths`, relative to where the sandbox's shell is, as paths relative to the repository ("." for its
    root); None for one outside it."""
    workdir = sandbox.workdir.rstrip("/") or "/"
    # `builtin`: the model may have defined a `pwd` of its own; a folder's name may end in a space.
    cwd = sandbox.run("builtin pwd", timeout=10).output.rstrip("\n")
    if not cwd:
        return [None for _ in paths]  # where the shell is cannot be told
    found: list[str | None] = []
    for path in paths:
        full = posixpath.normpath(posixpath.join(cwd, path))
        inside = full == workdir or full.startswith(workdir + "/")
        found.append((repo_relative(workdir, full) or ".") if inside else None)
    return found
