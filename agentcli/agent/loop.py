"""The plan-act-observe loop: ask the model, read its reply into an action, carry it out or say why not,
observe, until the model is done or a limit trips. It never prints, and knows no particular model,
sandbox or git; the heuristics live in the modules it calls (first_look, to_run, after_command,
finishing, candidates), each behind its policy."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from agentcli.agent.after_command import Ran, before_command, check_stuck, observe
from agentcli.agent.asking import ModelCalls
from agentcli.agent.candidates import Candidates
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.finishing import Finisher
from agentcli.agent.first_look import first_look
from agentcli.agent.guards import CommandGuards
from agentcli.agent.outcome import Approver, Outcome, Resumed, RunLimits, Stop
from agentcli.agent.parsing import ParsedReply, printed_done, reply_gist, without_plan
from agentcli.agent.placing import Placer
from agentcli.agent.recorded import journaled_as_command
from agentcli.agent.repeats import RecentOutputs
from agentcli.agent.replying import step_reply
from agentcli.agent.repo_view import RepoView
from agentcli.agent.run_context import RunContext
from agentcli.agent.stuck import StuckDetector
from agentcli.agent.to_run import command_to_run, user_approved
from agentcli.agent.verdicts import Malformed, Objected, Rejected
from agentcli.context.window import Context, ContextWindow
from agentcli.events import (
    CommandStarted,
    EventBus,
    FormatError,
    PlanUpdated,
)
from agentcli.models.base import Model
from agentcli.policies import Policies
from agentcli.prompts import render
from agentcli.sandbox.base import Sandbox

# Seconds a server the model starts in the foreground runs before it is stopped: long enough to
# print its start-up lines or crash, where waiting for the command timeout costs a third of the run.
SERVER_SECONDS = 10.0


class Agent:
    """Drives one model and one sandbox through a task, emitting events as it goes. What the parts of
    the loop share (limits, state, facts, outcome, checks on DONE) is `self.ctx`."""

    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        events: EventBus,
        *,
        limits: RunLimits | None = None,
        context: Context | None = None,
        stuck: StuckDetector | None = None,
        approve: Approver | None = None,
        finish_checks: list[DoneCheck] | None = None,
        policies: Policies | None = None,
        tree_kept: Callable[[], AbstractContextManager[list[str]]] | None = None,
    ):
        policies = policies or Policies.every()
        limits = limits or RunLimits()
        repo = RepoView(sandbox)
        context = context or ContextWindow(model, reply_tokens=limits.reply_tokens, on_event=events.emit)
        if isinstance(context, ContextWindow):
            context.read_reply, context.time_left = reply_gist, lambda: self.ctx.time_left()
        self.ctx = RunContext(
            model, sandbox, repo, events, limits, context, policies,
            guards=CommandGuards(sandbox, repo.read, policies),
            placer=Placer(repo, policies, lambda: self.ctx.facts.asked_files),
            tree_kept=tree_kept or (lambda: contextlib.nullcontext([])),
            finish_checks=list(finish_checks or []),
            asks_approval=approve is not None,
        )  # fmt: skip
        self.stuck = stuck or StuckDetector()
        self.approve = approve
        self.calls = ModelCalls(self.ctx)
        self.candidates = Candidates(self.ctx, self.calls)
        self.finisher = Finisher(self.ctx)

    def run(self, task: str, *, context_text: str = "", first_looks: Sequence[str] = ()) -> Outcome:
        """Work on `task` until the model finishes or a limit trips. `context_text` follows the task, then
        the results of `first_looks`: commands run before the first reply to show the current state."""
        ctx = self.ctx
        ctx.recent_outputs = RecentOutputs()
        ctx.state.shown_definition = None
        system = render("system", workdir=ctx.sandbox.workdir)
        parts = [context_text.strip(), *(first_look(ctx, command) for command in first_looks)]
        context = "\n\n".join(p for p in parts if p).rstrip()
        ctx.context.start(system, render("task", task=task.strip(), context=context))
        if ctx.state.shown_definition is not None:
            # Shown the definition to change, a small model plans to read it and reads it, again and
            # again: the first reply is the change, begun.
            ctx.begin_change(*ctx.state.shown_definition, policy="first-change")
        return self._drive()

    def resume(self, at: Resumed) -> Outcome:
        """Go on with a run from the start of step `at.step`: the context as it sent that step's prompt,
        the counters as they were (the limits are the caller's, less what was spent)."""
        ctx = self.ctx
        ctx.context.restore(at.prompt, at.context_state, at.plan)
        ctx.outcome.resume_from(at)
        ctx.state.resume_from(at)
        ctx.commands_ran = list(at.commands)
        return self._drive(format_errors=int(at.progress.get("format_errors", 0)))

    def continue_with(self, task: str) -> Outcome:
        """A follow-up task in the same session: history and sandbox state are kept."""
        self.ctx.state.own_check = ""  # the earlier task's check says nothing of this one
        self.ctx.state.copied_back = set()  # a file copied back then may be this task's to change
        self.ctx.recent_outputs = RecentOutputs()  # what the earlier task printed may be summarised away
        self.ctx.context.add("user", render("task", task=task.strip(), context=""))
        return self._drive()

    def _drive(self, format_errors: int = 0) -> Outcome:
        state, outcome = self.ctx.state, self.ctx.outcome
        state.started = time.monotonic()
        state.format_errors = format_errors
        state.first_step = outcome.steps
        state.questioned = set()
        outcome.standing_doubt = ""
        try:
            while True:
                self.ctx.check_limits()
                self._step()
        except Stop as stop:
            outcome.status, outcome.reason, outcome.summary = stop.status, stop.reason, stop.summary
        finally:
            outcome.wall_time = self.ctx.elapsed()
        return outcome

    def _step(self) -> None:
        ctx, state, outcome = self.ctx, self.ctx.state, self.ctx.outcome
        step = outcome.steps + 1
        text, parsed = step_reply(ctx, self.calls, self.candidates, step)
        unchanged_plan = parsed.plan is not None and parsed.plan == outcome.plan
        kept = parsed.history_text or text
        ctx.context.add("assistant", without_plan(kept) if unchanged_plan else kept)
        if ctx.out_of_time():
            # The reply may have been cut short by the deadline: don't act on half a thought.
            raise Stop("failed", f"time limit reached ({ctx.limits.timeout:g}s)")
        if parsed.plan and parsed.plan != outcome.plan:
            state.commands_since_plan = 0
            outcome.plan = parsed.plan
            ctx.context.set_plan(parsed.plan)
            ctx.events.emit(PlanUpdated(steps=parsed.plan))
        try:
            if parsed.finished:
                self.finisher.finish(parsed)
            elif parsed.command is not None or parsed.file_write is not None:
                self._act(parsed, step)
            else:
                error = parsed.error or "no command found"
                raise Malformed(f"{error} {ctx.progress().reminder()}" if outcome.plan else error)
        except Rejected as rejected:
            self._tell(rejected, step)

    def _act(self, parsed: ParsedReply, step: int) -> None:
        ctx, state = self.ctx, self.ctx.state
        command, notes = command_to_run(ctx, parsed)
        state.format_errors, state.refused, state.echoes_in_a_row = 0, "", 0
        if self.approve is not None:
            if (approved := user_approved(ctx, self.approve, command)) is None:
                return
            command, notes = approved[0], [*notes, *approved[1]]
        ran = Ran(parsed, command)
        before_command(ctx, ran)
        ctx.events.emit(CommandStarted(step=step, command=command, notes=notes))
        server = ctx.guards.server(command)
        timeout = min(SERVER_SECONDS, self.ctx.command_timeout()) if server else self.ctx.command_timeout()
        try:
            with journaled_as_command(ctx.sandbox):
                obs = ran.obs = ctx.sandbox.run(command, timeout=timeout)
        except KeyboardInterrupt:
            # Keep the history well-formed for a follow-up task: every command gets an answer.
            ctx.context.add("user", render("observation/interrupted"))
            raise
        observe(ctx, ran, server, step, notes)
        if obs.ok and not parsed.finish_after_command and (summary := printed_done(command, obs.output)) is not None:
            parsed.finish_after_command, parsed.summary = True, summary
        if parsed.finish_after_command and obs.ok:
            try:
                self.finisher.finish(parsed)
            except Objected as objected:  # told now: the stuck check below follows it
                self._tell(objected, step)
        check_stuck(ctx, self.stuck, step, command, obs)

    def _tell(self, rejected: Rejected, step: int) -> None:
        """Tell the model why its reply was not carried out (and the user, in one line)."""
        ctx, state, message = self.ctx, self.ctx.state, rejected.message
        # Our own words, for the echoed-DONE check: the plan the reminder quotes is the model's.
        state.told.append(message.replace(ctx.progress().reminder(), ""))
        state.format_errors += 1
        ctx.events.emit(FormatError(step=step, message=message, count=state.format_errors, verdict=rejected.label))
        if state.format_errors >= ctx.limits.max_format_errors:
            raise Stop("failed", f"{state.format_errors} replies in a row had no usable command")
        told = message if rejected.command_ran else render("format_errors/no_command_ran", error=message.rstrip())
        ctx.context.add("user", told)
