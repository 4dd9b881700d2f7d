"""Typed events: the loop emits them; renderers, the journal and recorders listen.

Every event serialises to a flat JSON object with a `type` field; docs/ci.md documents the schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

SCHEMA_VERSION = 1


@dataclass
class Event:
    type: ClassVar[str] = "event"
    # Whether the event goes to the session journal (streamed tokens do not: the reply does).
    journaled: ClassVar[bool] = True

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "time": round(time.time(), 3), **asdict(self)}


@dataclass
class RunStarted(Event):
    type: ClassVar[str] = "run_started"
    session_id: str
    task: str
    model: str
    sandbox: str
    workdir: str
    temperature: float = 0.0  # the sampling settings a trainer needs to reproduce the run
    seed: int = 0
    limits: dict[str, Any] = field(default_factory=dict)  # the run's limits, which a resumed run keeps
    schema_version: int = SCHEMA_VERSION


@dataclass
class Notice(Event):
    """Something the user should know that is not part of the agent's work (e.g. a model download)."""

    type: ClassVar[str] = "notice"
    message: str
    level: str = "info"  # info | warning


@dataclass
class ModelStarted(Event):
    type: ClassVar[str] = "model_started"
    journaled: ClassVar[bool] = False
    step: int


@dataclass
class TokenStreamed(Event):
    type: ClassVar[str] = "token"
    journaled: ClassVar[bool] = False
    text: str


@dataclass
class ModelPrompt(Event):
    """The messages of one model call, as a change to the previous call's: its first `keep` messages
    stay, `messages` follow. So the journal holds every prompt the model saw (`session/replay.py`
    rebuilds them) while each step adds only what is new."""

    type: ClassVar[str] = "model_prompt"
    step: int
    keep: int
    messages: list[dict[str, Any]]
    prefix: str = ""  # the start agentcli began the reply with, for a backend that continues it
    temperature: float | None = None
    progress: dict[str, Any] = field(default_factory=dict)  # the agent's counters then, for a resume


@dataclass
class ModelReplied(Event):
    type: ClassVar[str] = "model_replied"
    step: int
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    duration: float
    prompt_evaluated: int | None = None


@dataclass
class ReplyAskedAgain(Event):
    """A step's reply, set aside and asked again, with what that call cost: policy `echoed-reply` (it
    only echoed agentcli's notes) or `action-due` (stopped in its prose, it goes on to its action from
    there); `why` says which. The step's `model_replied` event is the reply kept; its
    duration holds every call."""

    type: ClassVar[str] = "reply_asked_again"
    step: int
    text: str
    why: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    duration: float
    prompt_evaluated: int | None = None


@dataclass
class CandidateScored(Event):
    """One of the replies sampled for a step that changes code, with the verdict of the check run on it
    (tests failing and passing; None: the check could not say) and whether it was the one kept. A step's
    candidates are a group of rollouts with rewards, as a trainer reads them."""

    type: ClassVar[str] = "candidate_scored"
    step: int
    index: int
    text: str
    failed: int | None
    passed: int | None
    chosen: bool
    prompt_evaluated: int | None = None  # of the candidate's prompt, what the model computed afresh
    # A draw that repeated a candidate held already: dropped, not judged (index: the one it repeated).
    repeated: bool = False
    # What a candidate not kept cost (the kept one's cost is its model_replied event's).
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


@dataclass
class ModelTokens(Event):
    """The exact token ids of a model call (backends that have them): for trainers, kept in the session's
    `tokens.jsonl`, not in the journal."""

    type: ClassVar[str] = "model_tokens"
    journaled: ClassVar[bool] = False
    step: int
    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float] | None = None


@dataclass
class ModelRetry(Event):
    type: ClassVar[str] = "model_retry"
    attempt: int
    delay: float
    error: str


@dataclass
class ModelSwitched(Event):
    """The run moved along its fallback chain: down when a model became unavailable, back up after its cool-down."""

    type: ClassVar[str] = "model_switched"
    from_model: str
    to_model: str
    reason: str


@dataclass
class ModelCacheHit(Event):
    """The next reply was served from the response cache, not asked of the model."""

    type: ClassVar[str] = "model_cache_hit"
    model: str
    key: str


@dataclass
class PlanUpdated(Event):
    type: ClassVar[str] = "plan_updated"
    steps: list[str]


@dataclass
class CommandStarted(Event):
    type: ClassVar[str] = "command_started"
    step: int
    command: str
    notes: list[str] = field(default_factory=list)


@dataclass
class CommandFinished(Event):
    type: ClassVar[str] = "command_finished"
    step: int
    command: str
    exit_code: int
    output: str
    duration: float
    total_bytes: int
    truncated: bool
    output_path: str | None
    timed_out: bool
    syntax_error: bool
    killed_reason: str | None = None


@dataclass
class SideCommand(Event):
    """A command run beside the model's own: a check on DONE, a guard's, a candidate change and its
    checks, the user's `!command` in the REPL. `output` keeps its two ends; the model saw it only where
    a note says so. `exit_code` -1: stopped before it finished."""

    type: ClassVar[str] = "side_command"
    command: str
    exit_code: int
    output: str
    duration: float
    timed_out: bool = False


@dataclass
class FormatError(Event):
    type: ClassVar[str] = "format_error"
    step: int
    message: str  # as the model was told it
    count: int
    # "objection (POLICY)", "refused", "refused (POLICY)"; "": the reply had no usable action (malformed).
    verdict: str = ""


@dataclass
class Nudge(Event):
    """The loop noticed the agent going round in circles and told the model."""

    type: ClassVar[str] = "nudge"
    step: int
    reason: str


@dataclass
class PolicyFired(Event):
    """A policy changed what the run did: a note, a refusal or objection, a rewrite, a begun reply, a look,
    a retry. A policy that never fired in a run did not change it (benchmarks/ablation.py reruns a task
    with a policy off only where it fired)."""

    type: ClassVar[str] = "policy_fired"
    name: str


@dataclass
class ContextCompacted(Event):
    type: ClassVar[str] = "context_compacted"
    folded_messages: int
    tokens_before: int
    tokens_after: int
    fallback: bool
    state: dict[str, Any] = field(default_factory=dict)  # the window after it (`ContextWindow.state`), for resume


@dataclass
class StepStarted(Event):
    """Where a step began, to resume from: the work tree's snapshot (a git tree; "" without git) and,
    where a command changed it since, the shell's state (its directory, variables, functions)."""

    type: ClassVar[str] = "step_started"
    step: int
    tree: str = ""
    shell_state: str | None = None  # None: as at the step before


@dataclass
class RunResumed(Event):
    """`agentcli resume` went on with this session from the start of `step`."""

    type: ClassVar[str] = "run_resumed"
    session_id: str
    step: int
    model: str
    sandbox: str


@dataclass
class RunFinished(Event):
    type: ClassVar[str] = "result"
    status: str  # finished | failed | interrupted | error
    reason: str
    summary: str
    steps: int
    tokens_in: int
    tokens_out: int
    cost: float
    wall_time: float
    files_changed: list[str] = field(default_factory=list)
    diffstat: str = ""
    session_id: str = ""
    branch: str | None = None
    commit: str | None = None
    patch: str | None = None
    # What a check still found wrong when the model's DONE was accepted (then the status is failed).
    standing_doubt: str = ""


def declared_done(status: str, standing_doubt: str) -> bool:
    """Whether the model's DONE ended the run: it finished, or its DONE stood while a check objected."""
    return status == "finished" or bool(standing_doubt)


Listener = Callable[[Event], None]


class EventBus:
    """Fans each event out to every listener, in the order they subscribed."""

    def __init__(self, listeners: list[Listener] | None = None):
        self.listeners: list[Listener] = list(listeners or [])

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)
