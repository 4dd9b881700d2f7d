"""`agentcli resume`: go on with a run that was killed or interrupted, from its journal alone.

The run goes on from the start of the last step whose prompt the journal holds. The work tree is
brought back to its snapshot at that step's start, so a command the kill cut short (or one whose
result the model never saw) runs again from the state it first ran in; the shell's directory,
variables and functions come back; the model is sent that step's prompt exactly as before, so a
deterministic model replies as it did and a prompt cache still hits. Steps, tokens, cost and time
count on from where they were. Events go on in the same journal, after a `run_resumed`.
"""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.agent.outcome import Outcome, Resumed
from agentcli.config import Settings
from agentcli.errors import AgentcliError, UsageError
from agentcli.events import Listener, RunResumed
from agentcli.models.base import ModelWrapper
from agentcli.models.scripted import ScriptedModel
from agentcli.repo import checkpoint as cp
from agentcli.session.replay import prompts, standing
from agentcli.session.solve import Session, SolveResult, TaskMark, attempt, signals_interrupt, suspended


@dataclass
class ResumePoint:
    session_id: str
    task: str
    model: str
    sandbox: str
    at: Resumed
    tree: str  # the work tree's snapshot at the step's start; "" when there is none
    shell_state: str | None  # the shell's state then; None: as a fresh shell starts
    elapsed: float  # seconds the run had been going, its pauses left out
    model_calls: int  # calls made before the step, on the trajectory that stands
    limits: dict[str, Any] = field(default_factory=dict)  # the run's own (`RUN_LIMITS`), as journaled
    task_number: int = 1  # the task's place in its session (an interactive session runs several)

    @property
    def checkpoint_name(self) -> str:
        """The checkpoint the task began with, as `Session.begin_task` named it."""
        return self.session_id if self.task_number == 1 else f"{self.session_id}-{self.task_number}"


def resume_point(events: list[dict[str, Any]]) -> ResumePoint:
    """Where the run of `events` goes on; UsageError when there is nothing to go on with."""
    tasks = [e for e in events if e.get("type") == "run_started"]
    if not tasks:
        raise UsageError("the journal holds no run")
    started = tasks[-1]  # an interactive session's last task: the one a kill or Ctrl-C stopped
    result = next((e for e in reversed(events) if e.get("type") in ("result", "run_resumed")), None)
    if result is not None and result.get("type") == "result" and result.get("status") != "interrupted":
        raise UsageError(f"session {started.get('session_id')} {result.get('status')}: there is nothing to resume")
    effective = standing(events)
    step_starts = {e["step"]: i for i, e in enumerate(effective) if e.get("type") == "step_started"}
    first_prompt = {}
    for i, e in enumerate(effective):
        if e.get("type") == "model_prompt" and e.get("step") in step_starts:
            first_prompt.setdefault(e["step"], i)
    if not first_prompt:
        raise UsageError(
            f"session {started.get('session_id')} cannot be resumed: its journal has no step to go on from "
            "(it stopped before the first, or an older agentcli wrote it)"
        )
    step = max(first_prompt)
    upto = effective[: first_prompt[step]]
    prompt = prompts([*upto, effective[first_prompt[step]]])[-1]
    before_step = effective[: step_starts[step]]
    # Every reply paid for: the steps' replies, those asked again and the candidates not kept.
    replies = [
        e
        for e in events[: _position(events, effective[first_prompt[step]])]
        if e.get("type") in ("model_replied", "reply_asked_again", "candidate_scored")
    ]
    marker = effective[step_starts[step]]
    shell_states = [e["shell_state"] for e in effective[: step_starts[step] + 1] if e.get("shell_state") is not None]
    plans = [e["steps"] for e in before_step if e.get("type") == "plan_updated"]
    states = [e["state"] for e in upto if e.get("type") == "context_compacted" and e.get("state")]
    at = Resumed(
        step=step,
        prompt=prompt.messages,
        prefix=prompt.prefix,
        context_state=states[-1] if states else None,
        plan=plans[-1] if plans else [],
        # What the trajectory that stands did, and what was spent, the steps a kill cut short included.
        tokens_in=sum(int(e.get("prompt_tokens") or 0) for e in replies),
        tokens_out=sum(int(e.get("completion_tokens") or 0) for e in replies),
        cost=sum(float(e.get("cost") or 0.0) for e in replies),
        commands=[e["command"] for e in before_step if _ran(e)],
        progress=dict(effective[first_prompt[step]].get("progress") or {}),
    )
    return ResumePoint(
        session_id=str(started.get("session_id", "")),
        task=str(started.get("task", "")),
        model=str(started.get("model", "")),
        sandbox=str(started.get("sandbox", "")),
        at=at,
        tree=str(marker.get("tree") or ""),
        shell_state=shell_states[-1] if shell_states else None,
        elapsed=_elapsed(events, effective[first_prompt[step]]),
        model_calls=sum(1 for e in upto if e.get("type") == "model_prompt"),
        task_number=len(tasks),
        limits=dict(started.get("limits") or {}),
    )


def _ran(event: dict[str, Any]) -> bool:
    """A command of the model's (step 0: what agentcli ran before the first reply)."""
    return event.get("type") == "command_started" and int(event.get("step") or 0) > 0


def _position(events: list[dict[str, Any]], event: dict[str, Any]) -> int:
    return next(i for i, e in enumerate(events) if e is event)


def _elapsed(events: list[dict[str, Any]], until: dict[str, Any]) -> float:
    """Seconds the run was going up to `until`, each go from its start to its last event."""
    total, start, last = 0.0, None, None
    for event in events:
        moment = float(event.get("time") or 0.0)
        if event.get("type") in ("run_started", "run_resumed"):
            if start is not None and last is not None:
                total += max(0.0, last - start)
            start = moment
        last = moment
        if event is until:
            break
    if start is not None and last is not None:
        total += max(0.0, last - start)
    return total


@dataclass
class ResumeRequest:
    point: ResumePoint  # `resume_point` of the run's journal
    repo: Path
    settings: Settings
    use_git: bool = True
    listeners: list[Listener] | None = None


def resume(request: ResumeRequest) -> SolveResult:
    """Go on with the run at `request.point` in `request.repo` until it ends, as `solve` would have."""
    point = request.point
    session = Session(
        request.repo,
        request.settings,
        use_git=request.use_git,
        listeners=request.listeners,
        session_id=point.session_id,
    )
    try:
        mark = _mark(session, point)
        _skip_used_replies(session, point.model_calls)
    except BaseException:
        session.close()
        raise

    def run() -> Outcome:
        sandbox = session.create_sandbox()
        session.events.emit(
            RunResumed(session_id=session.id, step=point.at.step, model=session.model.name, sandbox=session.backend)
        )
        sandbox.start()  # after what is left of the killed go's sandbox is gone (a container may linger)
        if point.tree:
            _bring_back(session, point)
        if point.shell_state:
            # Sourced in a command's subshell: on its exit the shell saves that state and takes it up.
            sandbox.run("{\n" + restorable(point.shell_state) + "\n} >/dev/null 2>&1; true")
        return session.resume_task(point.task, point.at, point.elapsed)

    with signals_interrupt(signal.SIGTERM, signal.SIGHUP):
        try:
            outcome, exit_code = attempt(run, Outcome(status="failed", reason="not started"))
        finally:
            session.close_sandbox()
    suspended(session, outcome)
    result = session.finish_task(mark, outcome, task=point.task)
    session.close()
    return SolveResult(result, exit_code, mark.checkpoint, session.journal.path)


# bash's own variables: read-only ones, and those that describe the running script (assigning
# BASH_ARGC ends a sourced script there).
_BASH_OWN = re.compile(
    r"^declare -(?:[A-Za-z]*r[A-Za-z]* |[A-Za-z-]+ (?:BASH\w*|FUNCNAME|PIPESTATUS|COPROC\w*|LINENO|RANDOM|SRANDOM"
    r"|SECONDS|EPOCH\w+|HISTCMD|GROUPS|DIRSTACK|_)=)"
)


# The saved state's first line, from shell_init.sh's `__ac_save`: where the shell was.
_SAVED_DIRECTORY = re.compile(r"^\[\[ \$PWD == .+ \]\] \|\| builtin cd -- (.+) 2>/dev/null$")


def restorable(state: str) -> str:
    """A saved shell state that a fresh shell can source: bash's own variables left out, and the
    shell's directory made first where it is gone (a snapshot of the work tree holds no empty folder,
    so one the shell was in when the step began is not brought back with the files)."""
    lines = [line for line in state.splitlines() if not _BASH_OWN.match(line)]
    if lines and (saved := _SAVED_DIRECTORY.match(lines[0])) is not None:
        lines.insert(0, f"[ -d {saved.group(1)} ] || mkdir -p -- {saved.group(1)}")
    return "\n".join(lines)


def _mark(session: Session, point: ResumePoint) -> TaskMark:
    """The task's start as the first go checkpointed it."""
    checkpoint = None
    if session.use_git:
        try:
            checkpoint = cp.load_checkpoint(session.root, point.checkpoint_name)
        except (AgentcliError, OSError) as e:
            session.notify(f"the run's checkpoint is gone ({e}): the diff and undo will not cover the first go")
    session.adopt_task(checkpoint, point.task_number)
    return TaskMark(checkpoint, cp.ignored_entries(session.root) if checkpoint else set(), time.monotonic())


def _bring_back(session: Session, point: ResumePoint) -> None:
    """The work tree as the step began."""
    try:
        cp.bring_tree(session.root, point.tree)
    except AgentcliError as e:
        raise UsageError(f"cannot bring the work tree back to step {point.at.step}: {e}") from None
    session.notify(f"resuming at step {point.at.step}: the work tree is as that step began")


def _skip_used_replies(session: Session, calls: int) -> None:
    """A scripted model goes on with the reply after those already used (other models need nothing)."""
    model = session.model
    while isinstance(model, ModelWrapper):
        model = model.wrapped
    if isinstance(model, ScriptedModel):
        model.skip(calls)
