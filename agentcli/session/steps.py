"""Where each step of a run begins, journaled so `agentcli resume` can go on from there.

At each step's start (before the model is asked), the work tree is snapshotted as a git tree (the
blobs go to the repository's object store, nothing else changes) and the shell's state, which the
sandbox's shell writes to its control channel whenever a command changed it (directory, variables,
functions), is journaled when it differs from the last one journaled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli import untrusted
from agentcli.errors import AgentcliError
from agentcli.events import Event, ModelStarted, StepStarted
from agentcli.repo import checkpoint as cp

SHELL_STATE = "shell.state"  # in the control channel, written by shell_init.sh
MAX_SHELL_STATE = 1 << 20


class StepMarker:
    """A listener: on `ModelStarted`, emits `StepStarted` with the snapshot and any new shell state."""

    def __init__(
        self,
        root: Path,
        channel: Path,
        emit: Callable[[Event], None],
        *,
        use_git: bool,
        exclude: Callable[[], tuple[str, ...]],
    ):
        self.root, self.channel, self.emit, self.use_git, self.exclude = root, channel, emit, use_git, exclude
        self._shell_state: str | None = None
        self.last_step = 0  # the last step marked; 0: none yet, nothing to resume from

    def __call__(self, event: Event) -> None:
        if not isinstance(event, ModelStarted):
            return
        tree = ""
        if self.use_git:
            try:
                tree = cp.snapshot_tree(cp.Git(self.root), self.exclude())
            except AgentcliError:  # the sandbox broke git's data: this step cannot be resumed from
                tree = ""
        state = untrusted.try_read_text(self.channel, SHELL_STATE, limit=MAX_SHELL_STATE)
        changed = state if state is not None and state != self._shell_state else None
        if changed is not None:
            self._shell_state = changed
        self.emit(StepStarted(step=event.step, tree=tree, shell_state=changed))
        self.last_step = event.step
