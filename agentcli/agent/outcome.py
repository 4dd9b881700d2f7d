"""What a run is given and what it gives back: its limits, the user's answer before a command, where a
resumed run goes on, how it ended, and `Stop`, which ends it from wherever the loop decides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentcli.models.base import Message


@dataclass
class RunLimits:
    max_steps: int = 40
    timeout: float = 0.0  # wall clock seconds; 0: none
    command_timeout: float = 120.0
    max_cost: float = 0.0
    max_tokens: int = 0
    max_format_errors: int = 5
    reply_tokens: int = 1024
    candidates: int = 1  # replies sampled at a step that changes code, for the check to choose from (agent.selection)


@dataclass
class Outcome:
    """How a run ended, before any repository bookkeeping."""

    status: str  # finished | failed
    reason: str
    summary: str = ""
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    wall_time: float = 0.0
    plan: list[str] = field(default_factory=list)
    # What a check that judges the result (`DoneCheck.gist_end`) still found wrong when DONE was
    # accepted, its objection raised once already: "the repository's tests fail". Empty where none did
    # (set at each DONE accepted, cleared as each task's run starts).
    standing_doubt: str = ""

    def judged(self) -> Outcome:
        """The outcome as reported: a DONE accepted while a check that judges the result still objects
        is no finished task (the model's summary stays: it says what the model believes it did)."""
        if self.status == "finished" and self.standing_doubt:
            return replace(self, status="failed", reason=f"declared finished while {self.standing_doubt}")
        return self

    def resume_from(self, at: Resumed) -> None:
        """The counts as they were when the resumed step began."""
        self.steps, self.plan = at.step - 1, list(at.plan)
        self.tokens_in, self.tokens_out, self.cost = at.tokens_in, at.tokens_out, at.cost


@dataclass
class Decision:
    """The user's answer before a command runs: run it (perhaps as edited) or skip it."""

    run: bool = True
    command: str | None = None  # the command as the user edited it
    message: str = ""  # told to the model when the command is skipped


Approver = Callable[[str], Decision]


class Stop(Exception):
    """Ends the run: how (finished | failed), why, and the model's summary when it finished."""

    def __init__(self, status: str, reason: str, summary: str = ""):
        super().__init__(reason)
        self.status, self.reason, self.summary = status, reason, summary


@dataclass
class Resumed:
    """Where a resumed run goes on: the step, its prompt as sent, and what the run had done before it."""

    step: int
    prompt: list[Message]
    prefix: str = ""
    context_state: dict | None = None  # the window's last journaled state; None before any compaction
    plan: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    commands: list[str] = field(default_factory=list)
    progress: dict = field(default_factory=dict)  # the agent's counters as the step began (ModelPrompt.progress)
