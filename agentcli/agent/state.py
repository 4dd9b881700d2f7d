"""What a run has done so far that the loop's decisions read: one object instead of a score of the
agent's attributes, so the loop's state can be read (and journaled, and reset) in one place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.outcome import Resumed
from agentcli.agent.selection import Verifier
from agentcli.models.base import Message


class TreeChanges(Protocol):
    """Marks of the work tree, and the text files changed since one (repo.tree_changes)."""

    def mark(self) -> str | None: ...

    # (path, text before, text after), None where the file did not exist.
    def since(self, mark: str) -> Sequence[tuple[str, str | None, str | None]]: ...


@dataclass
class TaskFacts:
    """What the session read of the task and the repository before the run, for the loop to act on."""

    asked_files: list[str] = field(default_factory=list)  # the files the task asks to be written
    verifier: Verifier | None = None  # the repository's tests, that candidate replies are judged by (agent.selection)
    takes_back: bool = False  # whether a candidate's change can be put back (git keeps the work tree)
    # Whether git ignores one of these paths (relative to where the shell is), as the snapshots that put a
    # change back do; True where that cannot be told: such a change could not be taken back.
    ignored: Callable[[list[str]], bool] = lambda paths: False
    tree_changes: TreeChanges | None = None  # what a command changed; None where git cannot tell


@dataclass
class RunState:
    """The loop's state between steps."""

    started: float = 0.0  # time.monotonic() when the run began
    first_step: int = 0  # the step the run began at (a resumed run begins later)
    format_errors: int = 0  # replies in a row with no usable action
    questioned: set[tuple[str, str]] = field(default_factory=set)  # objections raised, once each
    last_exit_code: int = 0
    last_command: str = ""
    last_failure: str = ""  # how the last command failed, in a few words; "" when it succeeded
    refused: str = ""  # the failing command last refused, until another command runs
    failure_at: tuple[str, int] | None = None  # the repository file and line the last failure names
    unchecked: bool = False  # the last command changed files and showed nothing of the result
    commands_since_plan: int = 0
    told: list[str] = field(default_factory=list)  # what agentcli objected or answered to replies, in order
    echoes_in_a_row: int = 0  # DONE lines copying agentcli's words since the last command
    # The file and first line of the definition the first looks showed, to change.
    shown_definition: tuple[str, int] | None = None
    reply_start: str = ""  # how the next reply begins, written for the model (see agent.begun); "" for none
    # The file whose one definition the reply was begun with: the block is that definition's change.
    begun_definition_in: str | None = None
    reply_definition: str | None = None  # the same, for the reply begun next
    # The begun reply is prose stopped before its action (policy `action-due`): the action comes next.
    action_due: bool = False
    # Files a block wrote back just as they were: a change begun there again is copied again.
    copied_back: set[str] = field(default_factory=set)
    prompt_sent: list[Message] = field(default_factory=list)  # the last prompt journaled
    objected: DoneCheck | None = None  # the check on DONE that objected last
    # The model's own check: the last command it ran that only runs the code (checking.runs_check) and
    # failed. Candidate replies are judged by it too (agent.selection); "" for none yet.
    own_check: str = ""

    def resume_from(self, at: Resumed) -> None:
        """The progress as it was when the resumed step began (ModelPrompt.progress)."""
        self.commands_since_plan = int(at.progress.get("commands_since_plan", 0))
        self.echoes_in_a_row = int(at.progress.get("echoes_in_a_row", 0))
        self.own_check = str(at.progress.get("own_check", ""))
        self.copied_back = {str(path) for path in at.progress.get("copied_back", [])}
        self.reply_start = at.prefix
        begun_in = at.progress.get("reply_definition")
        self.reply_definition = begun_in if isinstance(begun_in, str) and begun_in else None
        self.action_due = bool(at.progress.get("action_due", False))
