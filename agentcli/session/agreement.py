"""Attempts that agree: a finished attempt is tried again afresh, and the state most attempts finished
on stands (the `agreement` policy). Self-consistency, judged by the files the attempts left in the
sandbox, never by what the model says nor by the task's wording.

A small model's first, greedy attempt often finishes on a wrong answer with most of the time left, where
no test can say so. Independent sampled attempts that finish on the same files outvote it; attempts that
all differ change nothing (the earliest finished stands), so agreement can only replace a state that
another two attempts contradict alike.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.repo import checkpoint as cp
from agentcli.repo.git import Git

# Bytes of a changed file compared; a longer file is compared by its blob, byte for byte.
COMPARED_BYTES = 1 << 20


def fingerprint(root: Path, checkpoint: cp.Checkpoint, state: cp.Checkpoint) -> str:
    """What an attempt left (`state`, set aside) against the task's `checkpoint`: each changed path with
    its content, every line's trailing blanks and the blank lines at the end left out (a file taken
    out of git but kept on disk, ignored, counts with its content: it is not deleted); the tree of the
    commit HEAD is at, where it moved; and the branch HEAD is on. Two attempts that wrote the same
    files differently spaced agree; a commit's message and time, and new ignored files (caches, build
    output), do not count."""
    git = Git(root)
    raw = git.raw("diff-tree", "-r", "--no-renames", "-z", checkpoint.tree, state.tree)
    fields = [f for f in raw.split(b"\0") if f]
    digest = hashlib.sha256()
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        blob: str | None = meta.split()[3].decode()
        if set(blob) == {"0"}:  # gone from the work tree: deleted, or left on disk and ignored
            blob = _ignored_blob(git, state, os.fsdecode(path))
        content = b"(deleted)" if blob is None else git.blob_within(blob, COMPARED_BYTES)
        digest.update(path + b"\0" + (_normalised(content) if content is not None else str(blob).encode()) + b"\0")
    moved = state.head != checkpoint.head
    committed = git.try_("rev-parse", "-q", "--verify", f"{state.head}^{{tree}}") if moved else None
    digest.update(f"head {committed} {state.head_ref}".encode())
    return digest.hexdigest()


def _ignored_blob(git: Git, state: cp.Checkpoint, path: str) -> str | None:
    """The blob of `path` among the ignored files `state` kept, if it is one."""
    if state.ignored_tree is None:
        return None
    return git.try_("rev-parse", "-q", "--verify", f"{state.ignored_tree}:{path}")


def _normalised(content: bytes) -> bytes:
    lines = [line.rstrip() for line in content.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return b"\n".join(lines)


@dataclass
class Tally:
    """The states finished attempts left, by fingerprint, and the attempts that finished on each."""

    votes: dict[str, list[int]] = field(default_factory=dict)

    def add(self, attempt: int, state_print: str) -> None:
        self.votes.setdefault(state_print, []).append(attempt)

    def _leading(self) -> str | None:
        """The state most attempts finished on, the one finished first among equals."""
        return max(self.votes, key=lambda k: (len(self.votes[k]), -self.votes[k][0]), default=None)

    def leader(self) -> list[int]:
        """The attempts that finished on the leading state, in order (none before any finished)."""
        leading = self._leading()
        return [] if leading is None else self.votes[leading]

    def attempts_to_overturn(self) -> int:
        """Finished attempts it would take, at the fewest, for another state to lead: the runner-up
        (or a state not seen yet) must pass the leader, ties going to the one finished first."""
        leading = self._leading()
        if leading is None:
            return 1
        runner_up = max((len(v) for k, v in self.votes.items() if k != leading), default=0)
        return len(self.votes[leading]) + 1 - runner_up
