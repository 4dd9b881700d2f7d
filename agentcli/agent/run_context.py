"""What every part of the loop works with: the model, the sandbox, the context window, the policies, the
run's state and counters, and the begun reply. The loop owns one `RunContext`; the parts that ask the
model, look first, guard and note on commands, choose between tries and judge DONE are handed it."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from agentcli.agent.begun import change_start
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.guards import CommandGuards
from agentcli.agent.outcome import Outcome, RunLimits, Stop
from agentcli.agent.placing import Placer
from agentcli.agent.plan_progress import PlanProgress
from agentcli.agent.repeats import RecentOutputs
from agentcli.agent.repo_view import RepoView
from agentcli.agent.state import RunState, TaskFacts
from agentcli.context.window import Context
from agentcli.events import EventBus, Notice
from agentcli.models.base import Model
from agentcli.policies import Policies
from agentcli.sandbox.base import Sandbox

TreeKept = Callable[[], AbstractContextManager[list[str]]]


@dataclass
class RunContext:
    model: Model
    sandbox: Sandbox
    repo: RepoView
    events: EventBus
    limits: RunLimits
    context: Context
    policies: Policies
    guards: CommandGuards
    placer: Placer
    # Where the session can, what a check or first look changes in the work tree is put back.
    tree_kept: TreeKept
    state: RunState = field(default_factory=RunState)
    facts: TaskFacts = field(default_factory=TaskFacts)
    outcome: Outcome = field(default_factory=lambda: Outcome(status="failed", reason="not started"))
    commands_ran: list[str] = field(default_factory=list)  # every command that ran, in order
    # Asked in order when the model says it is done, after the loop's own checks.
    finish_checks: list[DoneCheck] = field(default_factory=list)
    recent_outputs: RecentOutputs = field(default_factory=RecentOutputs)
    temperature: float | None = None  # sampling temperature for every reply; None: the model's own
    asks_approval: bool = False  # the user approves each command: agentcli writes nothing on its own

    def progress(self) -> PlanProgress:
        return PlanProgress(self.outcome.plan, self.state.commands_since_plan)

    def elapsed(self) -> float:
        return time.monotonic() - self.state.started

    def time_left(self) -> float | None:
        """Seconds the run has left on its wall clock; None where it has none."""
        return self.limits.timeout - self.elapsed() if self.limits.timeout else None

    def out_of_time(self) -> bool:
        """Whether the run's wall clock is spent (never, for a run without one)."""
        return bool(self.limits.timeout) and self.elapsed() >= self.limits.timeout

    def check_limits(self) -> None:
        """Stop the run where a limit is reached: steps, time, tokens, cost."""
        limits, o = self.limits, self.outcome
        if o.steps - self.state.first_step >= limits.max_steps:
            raise Stop("failed", f"step limit reached ({limits.max_steps} steps)")
        if self.out_of_time():
            raise Stop("failed", f"time limit reached ({limits.timeout:g}s)")
        if limits.max_tokens and o.tokens_in + o.tokens_out >= limits.max_tokens:
            raise Stop("failed", f"token limit reached ({limits.max_tokens} tokens)")
        if limits.max_cost and o.cost >= limits.max_cost:
            raise Stop("failed", f"cost limit reached (${limits.max_cost:g})")

    def command_timeout(self) -> float:
        """Seconds the model's next command may run."""
        timeout = self.limits.command_timeout
        if (left := self.time_left()) is not None:
            # A command that never ends (a server started in the foreground) may take a third of the
            # time left, not all of it: the run still has time to learn from the timeout.
            timeout = max(1.0, min(timeout, left / 3))
        return timeout

    def begin_reply(self, start: str, definition_in: str | None = None, policy: str = "begun-replies") -> bool:
        """Begin the next reply with `start`, where the model can go on from it (see agent.begun) and
        `policy` is on; `definition_in`: the file whose one definition `start` begins."""
        if not getattr(self.model, "continues_replies", False) or not self.policies.on(policy):
            return False
        self.state.reply_start, self.state.reply_definition = start, definition_in
        self.policies.fired(policy)
        return True

    def begin_change(self, path: str, line: int | None, policy: str = "begun-replies") -> None:
        """Begin the next reply with a change to `path` about line `line` (see agent.begun), where
        `policy` is on."""
        if path in self.state.copied_back or (text := self.repo.read(path)) is None:
            # Begun at a file it has written back unchanged, a small model copies it once more.
            return
        if line is None and self.state.shown_definition is not None and self.state.shown_definition[0] == path:
            line = self.state.shown_definition[1]
        start = change_start(path, text, line)
        if start is not None and self.begin_reply(start.text, path if start.definition else None, policy):
            self.events.emit(Notice(message=f"the reply begins with a change to {path}, for the model to go on"))
