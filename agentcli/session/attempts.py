"""Attempts at one task: an attempt that went wrong is taken back and the task tried afresh, sampling,
and where no attempt finishes cleanly the best state any attempt left comes back (the `retries` policy).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentcli.agent.edits import SCRIPT_MARK, WRITE_MARK, without_comment_lines
from agentcli.agent.loop import Agent
from agentcli.agent.outcome import Outcome
from agentcli.prompts import render
from agentcli.repo import checkpoint as cp
from agentcli.repo import mirror
from agentcli.repo.git import GitError

if TYPE_CHECKING:
    from agentcli.session.solve import Session, TaskMark

# Attempts at one task, and what a fresh attempt needs to be worth starting.
MAX_ATTEMPTS = 3
MIN_RETRY_SECONDS = 45.0
MIN_RETRY_STEPS = 5
RETRY_TEMPERATURE = 0.3
# Endings of an attempt that gave up early (stuck, or replies with no usable command).
GAVE_UP = ("stuck:", "replies in a row had no usable command")
# Commands of an attempt taken back that the next one is told of, at most, and characters of each.
SHOWN_COMMANDS = 4
SHOWN_COMMAND_CHARS = 100


@dataclass
class _KeptAttempt:
    """An attempt taken back, with the state it left, in case no later attempt does better."""

    number: int
    worth: tuple[bool, bool, bool]
    outcome: Outcome
    state: cp.Checkpoint


def run_attempts(session: Session, task: str, mark: TaskMark) -> Outcome:
    """Run the task; an attempt that went wrong is taken back and the task tried afresh, sampling.

    With greedy decoding a small model that got lost stays lost: it gives up or loops within a
    minute while most of the time is left. A fresh attempt, sampled at a temperature, from the
    repository as it was, often goes another way. Each attempt taken back is kept aside; when no
    attempt finishes cleanly, the best state any attempt left comes back with its ending (an
    attempt that got stuck after the right change is worth more than one that finished while the
    tests fail). Steps, tokens and time are counted over all attempts.
    """
    try:
        return _attempts(session, task, mark)
    finally:
        if mark.checkpoint is not None:
            mirror.drop_aside(session.root, f"{mark.checkpoint.name}-attempt-")


def _attempts(session: Session, task: str, mark: TaskMark) -> Outcome:
    settings, root = session.settings, session.root
    setup = session.task_setup(task)
    context_text = session.overview(task)
    taken_back: list[str] = []
    deadline = time.monotonic() + settings.timeout if settings.timeout else None
    outcome = Outcome(status="failed", reason="not started")
    kept: _KeptAttempt | None = None
    most = MAX_ATTEMPTS if session.policies.on("retries") else 1
    for attempt in range(1, most + 1):
        agent = session.prepared_agent(setup)
        agent.ctx.outcome = dataclasses.replace(outcome, status="failed", reason="not started", plan=[])
        agent.ctx.limits = dataclasses.replace(
            agent.ctx.limits,
            max_steps=settings.max_steps - outcome.steps,
            timeout=agent.ctx.limits.timeout if deadline is None else deadline - time.monotonic(),
        )
        if attempt > 1:
            agent.ctx.temperature = max(settings.temperature, RETRY_TEMPERATURE)
        earlier = "\n\n".join([context_text, *taken_back]) if taken_back else context_text
        outcome = agent.run(task, context_text=earlier, first_looks=setup.looks)
        if mark.checkpoint is not None and cp.damaged(root, mark.checkpoint):
            # No attempt on a broken repository: a state set aside comes back (its objects from
            # agentcli's copy); else the result says so, and undo mends it.
            if kept is None:
                return outcome
            try:
                return _brought_back(session, kept, outcome, mark.checkpoint, f"attempt {attempt} damaged git's data")
            except GitError:
                return outcome
        why = _retry_reason(session, outcome)
        if why is None and (outcome.status == "finished" or kept is None):
            return outcome
        worth = _worth(session, outcome, agent)
        time_left = deadline is None or deadline - time.monotonic() >= MIN_RETRY_SECONDS
        last = why is None or attempt == most or not time_left or settings.max_steps - outcome.steps < MIN_RETRY_STEPS
        if last:
            if kept is None or worth > kept.worth:
                return outcome
            assert mark.checkpoint is not None
            return _brought_back(session, kept, outcome, mark.checkpoint, "no later attempt did better")
        assert mark.checkpoint is not None and session.sandbox is not None
        with session.sandbox.frozen():  # nothing the attempt left running races these writes to .git
            if kept is None or worth > kept.worth:
                name = f"{mark.checkpoint.name}-attempt-{attempt}"
                if (state := cp.set_aside(root, name, mark.checkpoint)) is not None:
                    kept = _KeptAttempt(attempt, worth, outcome, state)
                else:
                    session.notify(f"the state attempt {attempt} left could not be kept aside: it will not come back")
            cp.restore(root, mark.checkpoint)
        session.policies.fired("retries")
        session.sandbox.run(f"cd {shlex.quote(session.sandbox.workdir)}")
        session.notify(f"attempt {attempt} {why}: the repository was put back and the task is tried afresh")
        taken_back.append(_taken_back(attempt, why, agent.ctx.commands_ran))
    return outcome


def _brought_back(session: Session, kept: _KeptAttempt, last: Outcome, checkpoint: cp.Checkpoint, why: str) -> Outcome:
    """The repository as the attempt `kept` left it, and that attempt's ending, with the steps, tokens
    and cost of every attempt (`last`'s)."""
    assert session.sandbox is not None  # a state is set aside only where there is one
    with session.sandbox.frozen():  # nothing the last attempt left running races these writes to .git
        cp.restore_aside(session.root, kept.state, checkpoint)
    session.notify(f"{why}: the repository is as attempt {kept.number} left it")
    counts = {field: getattr(last, field) for field in ("steps", "tokens_in", "tokens_out", "cost")}
    return dataclasses.replace(kept.outcome, **counts)


def _worth(session: Session, outcome: Outcome, agent: Agent) -> tuple[bool, bool, bool]:
    """How good the state an attempt left is, to compare attempts: whether it changed anything, then
    whether the checks that make a finished attempt worth redoing pass on it, then whether it finished."""
    if session.checkpoint is None or cp.untouched_since(session.root, session.checkpoint):
        return False, False, outcome.status == "finished"
    if outcome.status == "finished":  # the checks ran when DONE was accepted
        sound = not outcome.standing_doubt
    else:  # None reads the task's wording, but which failures `tests` excuses does (policy `failing-before`)
        judging = [c for c in agent.ctx.finish_checks if c.gist_end is not None and agent.ctx.policies.applies(c.name)]
        sound = all(check.ask() is None for check in judging)
    return True, sound, outcome.status == "finished"


def _retry_reason(session: Session, outcome: Outcome) -> str | None:
    """Why the attempt is worth redoing from the start, or None when it stands. The finish checks
    have just run: what they still objected to when DONE was accepted is `outcome.standing_doubt`."""
    if session.checkpoint is None or session.sandbox is None:
        return None  # without a checkpoint the repository cannot be put back
    if outcome.status == "failed" and any(marker in outcome.reason for marker in GAVE_UP):
        return f"ended early ({outcome.reason})"
    if outcome.status != "finished":
        return None
    if cp.untouched_since(session.root, session.checkpoint):
        return "finished without changing anything"
    if outcome.standing_doubt:
        return f"finished while {outcome.standing_doubt}"
    return None


def _taken_back(number: int, why: str, commands: list[str]) -> str:
    """What the next attempt is told of one taken back: how it ended and its last commands. Sampling
    alone makes a small model's fresh attempt repeat the first, or fall apart; told what went wrong,
    it can take another way."""
    shown = [gist for command in commands[-SHOWN_COMMANDS:] if (gist := _gist(command))]
    return render("first_look/attempt_taken_back", number=number, why=why, commands=shown)


def _gist(command: str) -> str:
    """The first line of `command` that is not a comment, cut short; a file written is named as such."""
    first = without_comment_lines(command).partition("\n")[0].strip()
    if written := re.match(rf"^(?:mkdir -p \S+ && )?cat > (\S+) <<'{WRITE_MARK}", first):
        return f"(wrote {written.group(1)})"
    if first.startswith(f"python3 - <<'{SCRIPT_MARK}"):
        return "(a Python script)"
    return first if len(first) <= SHOWN_COMMAND_CHARS else first[: SHOWN_COMMAND_CHARS - 3] + "..."
