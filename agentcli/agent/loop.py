"""The plan-act-observe loop. It never prints, and knows no particular model, sandbox or git."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shlex
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from agentcli.agent.begun import change_start, read_file
from agentcli.agent.checking import (
    check_command,
    command_lines,
    only_changes,
)
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.edit_notes import described_edits, sed_report
from agentcli.agent.edits import (
    describe_change,
    new_content,
    replaces_with_fragment,
    sed_targets,
    write_command,
)
from agentcli.agent.expected import compared_call, expectation_note, only_tests
from agentcli.agent.focus import failure_focus
from agentcli.agent.guards import CommandGuards, already_done
from agentcli.agent.observation import describe_result, format_observation
from agentcli.agent.parsing import (
    ParsedReply,
    action_complete,
    parse_reply,
    printed_done,
    repeating,
    reply_gist,
    step_report,
    without_plan,
)
from agentcli.agent.placing import Placer
from agentcli.agent.plan_progress import PlanProgress
from agentcli.agent.printed import printed_not_written
from agentcli.agent.repair import repair
from agentcli.agent.repeats import RecentOutputs
from agentcli.agent.reply_grammar import reply_grammar
from agentcli.agent.repo_view import RepoView
from agentcli.agent.selection import CHECK_SECONDS, Candidate, Verdict, choose
from agentcli.agent.state import RunState, TaskFacts
from agentcli.agent.stuck import StuckDetector
from agentcli.agent.tools import ACTION_TOOLS, call_text, parsed_call
from agentcli.agent.tracebacks import is_test_file
from agentcli.agent.unrun import UnrunScripts
from agentcli.agent.verdicts import Malformed, Objected, Refused, Rejected
from agentcli.context.window import Context, ContextWindow
from agentcli.events import (
    CommandFinished,
    CommandStarted,
    EventBus,
    FormatError,
    ModelPrompt,
    ModelReplied,
    ModelStarted,
    ModelTokens,
    Notice,
    Nudge,
    PlanUpdated,
    TokenStreamed,
)
from agentcli.models.base import ContextLengthExceeded, Message, Model, ModelGaveUp, Reply
from agentcli.policies import Policies
from agentcli.prompts import render
from agentcli.sandbox.base import Observation, Sandbox

# Times a prompt the provider rejected as too long is compacted harder and sent again.
CONTEXT_RETRIES = 3


# `python3 -c "import os; for f in ...: ..."`: compound statements cannot follow `;` on one line.
_ONE_LINE_PYTHON = re.compile(r"^\s*python3?\s+-c\s", re.MULTILINE)
# A look at the lines of one file, numbered: the definition a task names, shown before the first reply.
_LINES_LOOK = re.compile(r"^cat -n (\S+) \| sed -n '(\d+),\d+p'$")
# Seconds a command run before the first reply may take (a server started by it is stopped).
FIRST_LOOK_TIMEOUT = 15.0
# Seconds a server the model starts in the foreground runs before it is stopped: long enough to
# print its start-up lines or crash, where waiting for the command timeout costs a third of the run.
SERVER_SECONDS = 10.0
# Characters of reply without any code fence after which generation stops (see _stream_watcher).
PROSE_LIMIT = 1500
# A reply that starts as our own observations and notes do: the model echoing them back.
_ECHO = re.compile(r"^\s*\[(?:next|note|exit|no command|timed out|syntax error)\b", re.IGNORECASE)
# Words in a row a DONE summary shares with agentcli's own message that make it a copy of that message.
ECHO_WORDS = 6
# Copied DONE lines in a row, with no command between, that end an attempt as stuck.
MAX_ECHOES_IN_A_ROW = 3
# Seconds a run must have left for a step to sample more replies for the check to choose from.
SELECTION_MIN_SECONDS = 60.0
# Sampling temperature for a second try when a reply repeats an earlier one.
RESAMPLE_TEMPERATURE = 0.7
# A command an objection offers to send as it stands (`echo debug.log >> .gitignore && git add ...`).
_OFFERED_COMMAND = re.compile(r"```bash\n|`(?:echo|printf|git|chmod|sed|mkdir|mv|cp|bash|python3?) [^`\n]+`")


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
    # The objections that still stood when DONE was accepted (raised once already), by check name.
    doubts: dict[str, str] = field(default_factory=dict)


@dataclass
class Decision:
    """The user's answer before a command runs: run it (perhaps as edited) or skip it."""

    run: bool = True
    command: str | None = None  # the command as the user edited it
    message: str = ""  # told to the model when the command is skipped


Approver = Callable[[str], Decision]


class _Stop(Exception):
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
    replies: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    progress: dict = field(default_factory=dict)  # the agent's counters as the step began (ModelPrompt.progress)


class Agent:
    """Drives one model and one sandbox through a task, emitting events as it goes."""

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
        self.model = model
        self.policies = policies or Policies.every()
        # Where the session can, what a first look changes in the work tree is put back (see repo.checkpoint).
        self.tree_kept = tree_kept or (lambda: contextlib.nullcontext([]))
        self.first_look_results: dict[str, Observation] = {}  # how each first look ran, by command
        self.sandbox = sandbox
        self.repo = RepoView(sandbox)
        self.events = events
        self.limits = limits or RunLimits()
        self.context = context or ContextWindow(model, reply_tokens=self.limits.reply_tokens, on_event=events.emit)
        if isinstance(self.context, ContextWindow):
            self.context.read_reply = reply_gist
        self.stuck = stuck or StuckDetector()
        self.approve = approve
        # Asked in order when the model says it is done, after "did the last command fail?".
        self.finish_checks = list(finish_checks or [])
        # Sampling temperature for every reply; None: the model's own setting.
        self.temperature: float | None = None
        self.outcome = Outcome(status="failed", reason="not started")
        self.state = RunState()
        self.facts = TaskFacts()
        self.commands_ran: list[str] = []  # every command that ran, in order
        self.recent_outputs = RecentOutputs()
        # The scripts the task asks for: their text after the last command, and whether they ran since
        # they last changed.
        self.unrun = UnrunScripts((), self.repo.read)
        self.guards = CommandGuards(sandbox, self.repo.read, self.policies)
        self.placer = Placer(self.repo, self.policies, lambda: self.facts.asked_files)

    def run(self, task: str, *, context_text: str = "", first_looks: Sequence[str] = ()) -> Outcome:
        """Work on `task` until the model finishes or a limit trips. `context_text` follows the task, then
        the results of `first_looks`: commands run before the first reply to show the current state."""
        self.state.task = task
        self.recent_outputs = RecentOutputs()
        self.state.shown_definition = None
        self.unrun = UnrunScripts(self.facts.asked_files, self.repo.read)
        system = render("system", workdir=self.sandbox.workdir)
        parts = [context_text.strip(), *(self._first_look(command) for command in first_looks)]
        context = "\n\n".join(p for p in parts if p).rstrip()
        self.context.start(system, render("task", task=task.strip(), context=context))
        if self.state.shown_definition is not None:
            # Shown the definition to change, a small model plans to read it and reads it, again and
            # again: the first reply is the change, begun.
            self._begin_change(*self.state.shown_definition)
        elif self.facts.first_reply_start:
            self._begin_reply(self.facts.first_reply_start)
        return self._drive()

    def _first_look(self, command: str) -> str:
        """Run `command` before the model's first reply and describe its result.

        A small model's first plan guesses the fix before it has seen the failure; with the error in
        front of it, the first reply can already be the fix. The command runs in a subshell (the
        model's shell keeps its state) and writes no bytecode into the repository.
        """
        self.events.emit(CommandStarted(step=0, command=command, notes=["run before the first reply"]))
        with self.tree_kept() as changed:
            run = self.repo.run_at_root(f"export PYTHONDONTWRITEBYTECODE=1 && {command}", FIRST_LOOK_TIMEOUT)
        obs = dataclasses.replace(run, command=command)
        self.first_look_results[command] = obs
        self.events.emit(_finished_event(0, obs))
        self.recent_outputs.seen(0, command, obs)  # the same look sent as the first reply is no news
        focus = self._focus(obs)
        # The way past a failure it would get stuck at, as after its own command (`chmod +x`).
        advice = None if obs.ok else self.guards.failure_advice(obs)
        # Shown the failure and the code, a small model still plans to "identify the issue" first and
        # greps for it; the fix itself is the reply it can give now.
        fix = render("first_look/fix_first", path=focus[0]) if focus and not is_test_file(focus[0]) else None
        if fix is not None and focus is not None and self._in_definition(focus[0], focus[1]):
            # The function the failure comes from (or that the failing test calls) is shown: the
            # first reply begins its change, as for a definition the task names.
            self.state.shown_definition = (focus[0], focus[1])
        if obs.ok and (lines := _LINES_LOOK.match(command)):
            # Shown the code to change and nothing more, a small model reads it again instead.
            fix = render("first_look/change_first", path=lines.group(1))
            self.state.shown_definition = (lines.group(1), int(lines.group(2)))
        kept = render("first_look/put_back", changed=changed[:5]) if changed else None
        notes = [note for note in (kept, focus[2] if focus else None, advice, fix) if note]
        return render("first_look/result", command=command, result=describe_result(obs, notes))

    def resume(self, task: str, at: Resumed) -> Outcome:
        """Go on with a run from the start of step `at.step`: the context as it sent that step's prompt,
        the counters as they were (the limits are the caller's, less what was spent)."""
        self.state.task = task
        self.context.restore(at.prompt, at.context_state, at.plan)
        self.outcome.steps = at.step - 1
        self.outcome.tokens_in, self.outcome.tokens_out, self.outcome.cost = at.tokens_in, at.tokens_out, at.cost
        self.outcome.plan = list(at.plan)
        self.commands_ran = list(at.commands)
        self.state.commands_since_plan = int(at.progress.get("commands_since_plan", 0))
        self.state.echoes_in_a_row = int(at.progress.get("echoes_in_a_row", 0))
        self.state.earlier_replies = {_normalised(text) for text in at.replies}
        self.state.reply_start = at.prefix
        return self._drive(format_errors=int(at.progress.get("format_errors", 0)))

    def continue_with(self, task: str) -> Outcome:
        """A follow-up task in the same session: history and sandbox state are kept."""
        self.state.task = task
        self.recent_outputs = RecentOutputs()  # what the earlier task printed may be summarised away
        self.context.add("user", render("task", task=task.strip(), context=""))
        return self._drive()

    def _drive(self, format_errors: int = 0) -> Outcome:
        self.state.started = time.monotonic()
        self.state.format_errors = format_errors
        self.state.first_step = self.outcome.steps
        self.state.questioned = set()
        try:
            while True:
                self._check_limits()
                self._step()
        except _Stop as stop:
            self.outcome.status, self.outcome.reason, self.outcome.summary = (
                stop.status,
                stop.reason,
                stop.summary,
            )
        finally:
            self.outcome.wall_time = time.monotonic() - self.state.started
        return self.outcome

    # -- one turn -----------------------------------------------------------------------------

    def _step(self) -> None:
        step = self.outcome.steps + 1
        self.events.emit(ModelStarted(step=step))
        started = time.monotonic()
        try:
            reply = self._complete()
            copied = self._copied(_reply_text(reply)) if self.policies.on("resample") else None
            if copied is not None:
                # Greedy decoding that has written a reply before, word for word, is copying itself and
                # would go round the same circle forever; one that echoes our own notes back has nothing
                # of its own to say. One sample at a higher temperature breaks it; a DONE that comes back
                # even then is the model insisting, which the checks judge.
                self._account(reply)
                self.events.emit(Notice(message=f"the model {copied}: asking again"))
                reply = self._complete(temperature=RESAMPLE_TEMPERATURE)
            text = _reply_text(reply)
            parsed = self._read_reply(reply, text)
            selected = self._selecting(parsed)
            if selected:
                self._account(reply)  # every candidate's tokens count, the one kept among them
                taken = RESAMPLE_TEMPERATURE if copied is not None else self.temperature
                reply, text, parsed = self._select(step, reply, text, parsed, taken)
        except ModelGaveUp as e:
            raise _Stop("failed", f"model gave up: {e}" if str(e) else "model gave up") from None
        finally:
            self.state.begun_definition_in = self.state.reply_definition
            self.state.reply_start, self.state.reply_definition = "", None
        self.outcome.steps = step
        usage = reply.usage
        if not selected:
            self._account(reply)
        self.state.earlier_replies.add(_normalised(text))
        self.events.emit(
            ModelReplied(
                step=step,
                text=text,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost=reply.cost,
                duration=time.monotonic() - started,
                prompt_evaluated=usage.prompt_evaluated,
            )
        )
        if isinstance(reply.raw, dict) and isinstance(ids := reply.raw.get("tokens"), dict):
            self.events.emit(ModelTokens(step=step, **ids))
        unchanged_plan = parsed.plan is not None and parsed.plan == self.outcome.plan
        kept = parsed.history_text or text
        self.context.add("assistant", without_plan(kept) if unchanged_plan else kept)
        if self.limits.timeout and self._elapsed() >= self.limits.timeout:
            # The reply may have been cut short by the deadline: don't act on half a thought.
            raise _Stop("failed", f"time limit reached ({self.limits.timeout:g}s)")
        if parsed.plan and parsed.plan != self.outcome.plan:
            self.state.commands_since_plan = 0
            self.outcome.plan = parsed.plan
            self.context.set_plan(parsed.plan)
            self.events.emit(PlanUpdated(steps=parsed.plan))
        try:
            if parsed.finished:
                self._finish(parsed)
            elif parsed.command is not None or parsed.file_write is not None:
                self._act(parsed, step)
            else:
                error = parsed.error or "no command found"
                raise Malformed(f"{error} {self._progress().reminder()}" if self.outcome.plan else error)
        except Rejected as rejected:
            self._tell(rejected, step)

    def _read_reply(self, reply: Reply, text: str) -> ParsedReply:
        """The action a reply asks for, its code with no file placed (see agent.placing)."""
        if reply.tool_call is not None:
            parsed = parsed_call(reply.tool_call, text)
        else:  # a reply decoded under the grammar is well formed: its last line is its action
            parsed = parse_reply(text, strict=self._reply_grammar() is not None)
        self.placer.place(parsed)
        return parsed

    def _selecting(self, parsed: ParsedReply) -> bool:
        """Whether this step's reply is one of several for the check to choose from (see agent.selection):
        it writes a file, the run has a check, and time is left for more replies."""
        if parsed.file_write is None or self.facts.verifier is None or not self.policies.on("select"):
            return False
        # Time for the replies and a check of each, and for the chosen one to run after.
        needed = SELECTION_MIN_SECONDS + self.limits.candidates * CHECK_SECONDS
        left = self.limits.timeout - self._elapsed() if self.limits.timeout else None
        return self.limits.candidates > 1 and (left is None or left > needed)

    def _select(
        self, step: int, reply: Reply, text: str, parsed: ParsedReply, taken: float | None
    ) -> tuple[Reply, str, ParsedReply]:
        """The reply of several to this step's prompt that the check judges best (see agent.selection);
        `taken`: the temperature the first was sampled at."""
        count = self.limits.candidates

        def sample(temperature: float) -> Candidate:
            self.events.emit(Notice(message=f"sampling another reply for the tests to choose from ({count} in all)"))
            extra = self._complete(temperature=temperature)
            self._account(extra)
            extra_text = _reply_text(extra)
            return Candidate(extra, extra_text, self._read_reply(extra, extra_text))

        chosen = choose(step, Candidate(reply, text, parsed), sample, self._verdict, self.events.emit, count, taken)
        return chosen.reply, chosen.text, chosen.parsed

    def _verdict(self, parsed: ParsedReply) -> Verdict | None:
        """The check's verdict on the work tree with `parsed`'s file write applied; the tree is put back.
        None for a write the loop would not make, and for a write to a test (the tests are the judge)."""
        if parsed.file_write is None or self.facts.verifier is None or is_test_file(parsed.file_write[0]):
            return None
        written = self._block_write(parsed, self.state.reply_definition)
        if not isinstance(written, tuple) or self.guards.refusal(written[0], self.state.task) is not None:
            return None
        with self.tree_kept():
            if not self.sandbox.run(written[0]).ok:
                return None
            return self.facts.verifier()

    def _block_write(self, parsed: ParsedReply, begun_in: str | None) -> tuple[str, list[str]] | str:
        """The command that writes `parsed`'s block to its file and the notes on it, or why it is not written
        (`begun_in`: the file whose one definition the reply was begun with)."""
        assert parsed.file_write is not None
        path, block = parsed.file_write
        before = self.repo.read(path)
        content, how = new_content(path, before, block, partial=path == begun_in)
        if before is not None and replaces_with_fragment(before, content):
            # "Look at line 15:" and a one-line block: a quote, not the file's new content.
            shown, lines = len(content.splitlines()), len(before.splitlines())
            return render("refusals/fragment", path=path, shown=shown, lines=lines)
        return write_command(path, content), [f"{how}.", describe_change(path, before, content)]

    def _copied(self, text: str) -> str | None:
        """What the reply copied instead of saying something new, or None."""
        if _normalised(text) in self.state.earlier_replies:
            return "repeated an earlier reply word for word"
        if _ECHO.match(text):
            return "echoed a note of agentcli's instead of replying"
        return None

    def _account(self, reply: Reply) -> None:
        self.outcome.tokens_in += reply.usage.prompt_tokens
        self.outcome.tokens_out += reply.usage.completion_tokens
        self.outcome.cost += reply.cost

    def _complete(self, temperature: float | None = None) -> Reply:
        """Call the model; a context-length error makes the context compact harder, then retry."""
        for attempt in range(CONTEXT_RETRIES + 1):
            try:
                prompt = self.context.prompt()
                self._journal_prompt(prompt, temperature)
                shape: dict[str, Any] = {"grammar": grammar} if (grammar := self._reply_grammar()) is not None else {}
                if getattr(self.model, "calls_tools", False):
                    shape["tools"] = ACTION_TOOLS
                return self.model.complete(
                    prompt,
                    max_tokens=self.limits.reply_tokens,
                    on_token=self._stream_watcher(),
                    temperature=self.temperature if temperature is None else temperature,
                    prefix=self.state.reply_start,
                    **shape,
                )
            except ContextLengthExceeded as e:
                if attempt == CONTEXT_RETRIES or not self.context.shrink(str(e)):
                    raise _Stop("failed", f"the prompt does not fit the model's context window: {e}") from None
        raise AssertionError("unreachable")

    def _reply_grammar(self) -> str | None:
        """The reply protocol's grammar from where the begun reply leaves off, for a model that decodes
        under one (passed only then: other models keep the protocol's older signature)."""
        if not getattr(self.model, "constrains_replies", False) or not self.policies.on("reply-grammar"):
            return None
        return reply_grammar(self.state.reply_start)

    def _journal_prompt(self, prompt: list[Message], temperature: float | None) -> None:
        """The prompt as an event: what changed since the last one sent."""
        keep = 0
        for sent, message in zip(self.state.prompt_sent, prompt, strict=False):
            if sent != message:
                break
            keep += 1
        self.events.emit(
            ModelPrompt(
                step=self.outcome.steps + 1,
                keep=keep,
                messages=[dict(m) for m in prompt[keep:]],
                prefix=self.state.reply_start,
                temperature=self.temperature if temperature is None else temperature,
                progress={
                    "commands_since_plan": self.state.commands_since_plan,
                    "format_errors": self.state.format_errors,
                    "echoes_in_a_row": self.state.echoes_in_a_row,
                },
            )
        )
        self.state.prompt_sent = [dict(m) for m in prompt]

    def _stream_watcher(self) -> Callable[[str], bool]:
        """Relays streamed pieces as events, and asks the model to stop once the reply holds its action
        (what small models write after it, invented output and further steps, is ignored and costs
        seconds) or once it goes round in a loop."""
        streamed: list[str] = []

        def on_token(piece: str) -> bool:
            self.events.emit(TokenStreamed(text=piece))
            streamed.append(piece)
            if self.limits.timeout and self._elapsed() >= self.limits.timeout:
                return True  # the wall clock holds during generation too; the next limit check ends the run
            if "\n" not in piece and "`" not in piece:
                return False
            text = "".join(streamed)
            # Small models can muse for hundreds of tokens without ever writing a command; past this
            # much prose, stop and ask for the command rather than wait for it.
            return action_complete(text) or repeating(text) or (len(text) > PROSE_LIMIT and "```" not in text)

        return on_token

    def _finish(self, parsed: ParsedReply) -> None:
        """Accept the model's "done", unless something says otherwise; each objection is raised once.

        Small models often declare a task done after merely looking at it, or right after a failure.
        A run in which no command ran at all is never accepted as finished.
        """
        if not self.commands_ran:
            raise Objected(render("objections/nothing_ran", reminder=self._progress().reminder()), "nothing ran")
        if self.policies.on("echoed-done") and (echoed := self._echoed(parsed.summary)) is not None:
            # "DONE: No file in the repository has changed yet, so the task is not done": no claim.
            # The message it copied, not our answer to an earlier copy of it again and again.
            self.state.echoes_in_a_row += 1
            if self.state.echoes_in_a_row >= MAX_ECHOES_IN_A_ROW:
                # Told again and again that its DONE only copies us, it copies that answer: it is stuck.
                raise _Stop(
                    "failed", f"stuck: {self.state.echoes_in_a_row} DONE lines in a row copied what agentcli said"
                )
            answer = render("objections/echoed_done", copied="", reminder="")  # how the answer begins
            copied = echoed.removeprefix(answer)
            message = render("objections/echoed_done", copied=copied, reminder=self._progress().reminder())
            # Sampled afresh, the 1.5B copies the objection again: a begun command it cannot copy.
            self._begin_reply(self._unchanged_start() or render("begun/command"))
            raise Objected(message, "echoed-done", command_ran=parsed.finish_after_command)
        if self.policies.on("step-done") and step_report(parsed.summary):
            message = render("objections/step_done", reminder=self._progress().reminder())
            raise Objected(message, "step-done", command_ran=parsed.finish_after_command)
        objection = self._finish_objection()
        if objection is not None:
            objected = self.state.objected
            assert objected is not None
            if objected.code and self.state.shown_definition is not None:
                # Told what its code still gets wrong, the 1.5B answers DONE again: the definition it
                # was shown first is where the change goes.
                self._begin_change(*self.state.shown_definition)
            elif start := self._unchanged_start():
                self._begin_reply(start)
            elif objected.output and self.facts.first_reply_start:
                # The 1.5B patches the output file it wrote instead, and breaks its header: its script again.
                self._begin_reply(self.facts.first_reply_start)
            elif _OFFERED_COMMAND.search(objection):
                # Offered the command to send, the 1.5B answers DONE again or copies the objection as
                # prose; in a begun bash block, the command is what it copies.
                self._begin_reply(render("begun/command"))
            # After a command, its observation already stands; the objection follows it.
            raise Objected(objection, objected.switch, command_ran=parsed.finish_after_command)
        raise _Stop("finished", "the model declared the task finished", parsed.summary)

    def _unchanged_start(self) -> str:
        """How the reply after the objection that nothing has changed yet begins ("" for the model's own)."""
        return (
            self.facts.unchanged_start
            if self.state.objected is not None
            and self.state.objected.name == "unchanged"
            and self.state.shown_definition is None
            else ""
        )

    def _echoed(self, summary: str) -> str | None:
        """What agentcli told the model that a DONE summary copies (ECHO_WORDS words in a row), or None."""
        words = summary.split()
        windows = {" ".join(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}
        for told in reversed(self.state.told):
            flat = " ".join(told.split())
            if any(window in flat for window in windows):
                return told.strip()
        return None

    def _finish_objection(self) -> str | None:
        checks = [
            # About the last command: raised again after each new command.
            DoneCheck("failed", self._last_command_failed, repeat="command"),
            # Raised once, whatever its text holds (it shows the changed file).
            DoneCheck("unchecked", self._unchecked_change, repeat="once"),
            DoneCheck("unrun", self.unrun.objection),
            DoneCheck("plan", lambda: self._progress().unfinished()),
            *self.finish_checks,
        ]
        doubts: dict[str, str] = {}
        for check in checks:
            if not self.policies.applies(check.switch):
                continue
            problem = check.ask()
            if problem is None:
                continue
            key = (check.name, check.key(problem, len(self.commands_ran)))
            if key not in self.state.questioned:
                self.state.questioned.add(key)
                self.state.objected = check
                # No "reply DONE again if you are sure": small models take it as the instruction.
                return render("objections/not_done", problem=problem, reminder=self._progress().reminder())
            doubts[check.name] = problem
        self.outcome.doubts = doubts
        return None

    def _last_command_failed(self) -> str | None:
        code = self.state.last_exit_code
        return render("objections/last_command_failed", exit_code=code) if code != 0 else None

    def _unchecked_change(self) -> str | None:
        """The objection when the last command changed files unseen, with the changed file shown.

        Told to check, a small model often changes the file again instead; shown the result, it can
        see whether the change is right.
        """
        if not self.state.unchecked:
            return None
        look = check_command(self.state.last_command)
        if look is None:
            return render("objections/unchecked_change", look=None)
        with self.tree_kept():
            obs = self.repo.run_at_root(look, FIRST_LOOK_TIMEOUT)
        return render("objections/unchecked_change", look=look, result=describe_result(obs))

    def _progress(self) -> PlanProgress:
        return PlanProgress(self.outcome.plan, self.state.commands_since_plan)

    def _act(self, parsed: ParsedReply, step: int) -> None:
        command, notes = self._command_to_run(parsed)
        self.state.format_errors = 0
        self.state.refused = ""
        self.state.echoes_in_a_row = 0
        if self.approve is not None:
            decision = self.approve(command)
            if not decision.run:
                self.events.emit(Notice(message=f"the user declined: {command.splitlines()[0] if command else ''}"))
                self.context.add("user", decision.message or render("user/declined", said="", advice=False))
                return
            if decision.command and decision.command != command:
                command = decision.command
                notes = [*notes, render("user/edited", command=command)]
        edited = {path: self.repo.read(path) for path in sed_targets(command)}
        # Our own write of a block was judged above; the model's `>` is judged by what it did.
        overwritten = {} if parsed.file_write is not None else self.guards.before_overwrites(command)
        if not edited and parsed.file_write is None and self.policies.on("described-edits"):
            notes = [*notes, *described_edits(self.repo, parsed.text)]
        if parsed.file_write is None and (made := self.guards.make_missing_folders(command)):
            notes = [*notes, made]
        self.events.emit(CommandStarted(step=step, command=command, notes=notes))
        server = self.guards.server(command)
        timeout = min(SERVER_SECONDS, self._command_timeout()) if server else self._command_timeout()
        try:
            obs = self.sandbox.run(command, timeout=timeout)
        except KeyboardInterrupt:
            # Keep the history well-formed for a follow-up task: every command gets an answer.
            self.context.add("user", render("observation/interrupted"))
            raise
        self.commands_ran.append(command)
        self.unrun.after(command)
        settled = already_done(command, obs) if self.policies.on("nothing-to-commit") else None
        if server and obs.timed_out:
            settled = render("notes/server_stopped", server=server, seconds=obs.duration)
        ok = obs.ok or settled is not None
        if settled is not None:
            notes = [*notes, settled]
        if ok:
            # A block of several lines is several steps of the plan done at once (counted as one, the
            # next-step hint sends the model to redo them); a Python script is the whole plan as code.
            script = parsed.code is not None and parsed.file_write is None
            self.state.commands_since_plan += len(self.outcome.plan) if script else command_lines(command)
        elif self._progress().observing_due():
            self.state.commands_since_plan += 1
        self.state.unchecked = only_changes(command)
        self.state.last_exit_code = 0 if ok else obs.exit_code if not obs.timed_out else 124
        self.state.last_command = command.strip()
        self.state.last_failure = "" if ok else _failure_summary(obs)
        if edited and obs.ok:
            notes = [*notes, *sed_report(self.repo, command, edited)]
        notes = [*notes, *self.guards.undo_lossy_overwrites(command, overwritten)]
        if (
            obs.ok
            and parsed.file_write is None
            and self.policies.on("printed-output")
            and (printed := printed_not_written(command, obs.output, self.facts.asked_files, self.repo.read))
        ):
            notes = [*notes, printed]
        if not obs.ok and _ONE_LINE_PYTHON.search(command) and "SyntaxError" in obs.output:
            notes = [*notes, render("notes/one_line_python")]
        if not ok and (advice := self.guards.failure_advice(obs)):
            notes = [*notes, advice]
        focus = self._focus(obs)
        self.state.failure_at = None
        if focus is not None:
            path, line, context = focus
            notes = [*notes, context]
            # The code to fix, never the test: small models told "fix test_x.py" rewrite the test.
            self.state.failure_at = None if is_test_file(path) else (path, line)
        self.events.emit(_finished_event(step, obs))
        shown = obs
        if (
            parsed.file_write is None
            and self.policies.on("repeat-output")
            and (repeat := self.recent_outputs.seen(step, command, obs))
        ):
            shown, note = repeat
            notes = [*notes, note]
            if (read := read_file(command)) is not None:
                self._begin_change(*read)
        self.context.add("user", format_observation(shown, notes, self._progress().hint()))
        if obs.ok and not parsed.finish_after_command and (summary := printed_done(command, obs.output)) is not None:
            parsed.finish_after_command, parsed.summary = True, summary
        if parsed.finish_after_command and obs.ok:
            try:
                self._finish(parsed)
            except Objected as objected:  # told now: the stuck check below follows it
                self._tell(objected, step)
        self.stuck.record(command, obs.output, obs.exit_code)
        verdict = self.stuck.check() if self.policies.on("stuck") else None
        if verdict is not None:
            action, reason = verdict
            if action == "stop":
                raise _Stop("failed", f"stuck: {reason}")
            self.events.emit(Nudge(step=step, reason=reason))
            self.context.add("user", StuckDetector.advice(reason))

    def _command_to_run(self, parsed: ParsedReply) -> tuple[str, list[str]]:
        """The command a reply comes to once repaired, placed and its block written, and the notes on it;
        raises Refused where a guard will not run it."""
        notes = parsed.notes
        command, repaired = repair(parsed.command or "")
        if repaired:
            notes = [*notes, repaired]
        if (placed := self.guards.placement(command, self.state.task)) is not None:
            # Told where the change goes instead, a small model sends its command again: it runs as meant.
            instead, why = placed
            if instead is None:
                raise Refused(render("refusals/misplaced", why=why))
            command, notes = instead, [*notes, render("notes/ran_instead", why=why, command=instead)]
        if parsed.file_write is not None:
            written = self._block_write(parsed, self.state.begun_definition_in)
            if isinstance(written, str):
                raise Refused(written, "fragment")
            # A command sent beside the edit (the tests, usually) runs right after it.
            command = written[0] + (f"\n{command}" if command.strip() else "")
            notes = [*written[1], *notes]
        refusal = self.guards.refusal(command, self.state.task)
        if refusal is not None:
            raise Refused(refusal)
        if (
            command.strip() == self.state.last_command
            and self.state.last_failure
            and self.policies.on("repeat-refusal")
        ):
            # Nothing ran since: the same command fails the same way, and a small model that sees it
            # fail again only sends it again. Name what to do instead, as concretely as possible;
            # sent once more after that, the run is stuck (and a fresh attempt has a better chance).
            if self.state.refused == command.strip():
                raise _Stop("failed", "stuck: the same failing command was sent again after it was refused")
            self.state.refused = command.strip()
            path, line = self.state.failure_at or (None, None)
            if self.state.failure_at is not None:
                # Told to fix the code at that line, a small model sends the failing command once more.
                self._begin_change(*self.state.failure_at)
            message = render("refusals/repeated_failure", failure=self.state.last_failure, path=path, line=line)
            raise Refused(message, "repeat-refusal")
        return command, notes

    def _begin_reply(self, start: str, definition_in: str | None = None) -> bool:
        """Begin the next reply with `start`, where the model can go on from it (see agent.begun);
        `definition_in`: the file whose one definition `start` begins."""
        if not getattr(self.model, "continues_replies", False) or not self.policies.on("begun-replies"):
            return False
        self.state.reply_start, self.state.reply_definition = start, definition_in
        return True

    def _in_definition(self, path: str, line: int) -> bool:
        """Whether line `line` of `path` is inside a definition whose change a reply can begin."""
        start = change_start(path, self.repo.read(path) or "", line)
        return start is not None and start.definition

    def _begin_change(self, path: str, line: int | None) -> None:
        """Begin the next reply with a change to `path` about line `line` (see agent.begun)."""
        if (text := self.repo.read(path)) is None:
            return
        if line is None and self.state.shown_definition is not None and self.state.shown_definition[0] == path:
            line = self.state.shown_definition[1]
        start = change_start(path, text, line)
        if start is not None and self._begin_reply(start.text, path if start.definition else None):
            self.events.emit(Notice(message=f"the reply begins with a change to {path}, for the model to go on"))

    def _focus(self, obs: Observation) -> tuple[str, int, str] | None:
        """Where a failed command's failure points in the repository's code (see agent.focus), or None."""
        if obs.ok or not self.policies.on("failure-focus"):
            return None
        return failure_focus(self.repo, obs.output, self._expectation)

    def _expectation(self, path: str, test_text: str, line: int) -> str | None:
        """For a failing `assert CALL == VALUE` in a test the task asks for: the value CALL gives."""
        if (
            not self.policies.on("expectation")
            or not only_tests(self.state.task, self.facts.asked_files)
            or (compared := compared_call(test_text, line)) is None
        ):
            return None
        with self.tree_kept():
            obs = self.repo.run_at_root(compared.command, timeout=10)
        return expectation_note(path, compared, obs.output) if obs.ok else None

    def _tell(self, rejected: Rejected, step: int) -> None:
        """Tell the model why its reply was not carried out (and the user, in one line)."""
        message = rejected.message
        # Our own words, for `_echoed`: the plan the reminder quotes is the model's.
        self.state.told.append(message.replace(self._progress().reminder(), ""))
        self.state.format_errors += 1
        self.events.emit(
            FormatError(step=step, message=message, count=self.state.format_errors, verdict=rejected.label)
        )
        if self.state.format_errors >= self.limits.max_format_errors:
            raise _Stop("failed", f"{self.state.format_errors} replies in a row had no usable command")
        self.context.add(
            "user", message if rejected.command_ran else render("format_errors/no_command_ran", error=message.rstrip())
        )

    # -- limits ---------------------------------------------------------------------------------

    def _elapsed(self) -> float:
        return time.monotonic() - self.state.started

    def _command_timeout(self) -> float:
        timeout = self.limits.command_timeout
        if self.limits.timeout:
            # A command that never ends (a server started in the foreground) may take a third of the
            # time left, not all of it: the run still has time to learn from the timeout.
            left = self.limits.timeout - self._elapsed()
            timeout = max(1.0, min(timeout, left / 3))
        return timeout

    def _check_limits(self) -> None:
        limits, o = self.limits, self.outcome
        if o.steps - self.state.first_step >= limits.max_steps:
            raise _Stop("failed", f"step limit reached ({limits.max_steps} steps)")
        if limits.timeout and self._elapsed() >= limits.timeout:
            raise _Stop("failed", f"time limit reached ({limits.timeout:g}s)")
        if limits.max_tokens and o.tokens_in + o.tokens_out >= limits.max_tokens:
            raise _Stop("failed", f"token limit reached ({limits.max_tokens} tokens)")
        if limits.max_cost and o.cost >= limits.max_cost:
            raise _Stop("failed", f"cost limit reached (${limits.max_cost:g})")


def _failure_summary(obs: Observation) -> str:
    if obs.timed_out:
        return "it timed out"
    lines = [line.strip() for line in obs.output.splitlines() if line.strip()]
    last = f": {lines[-1][:200]}" if lines else ""
    return f"exit {obs.exit_code}{last}"


def _reply_text(reply: Reply) -> str:
    """A reply as it reads in the conversation: a tool call in the text protocol's form."""
    return reply.text if reply.tool_call is None else call_text(reply.tool_call, reply.text)


def _normalised(reply: str) -> str:
    return " ".join(reply.split())


def lines_look(path: str, first: int, last: int) -> str:
    """The first look that shows lines `first` to `last` of `path`, numbered."""
    return f"cat -n {shlex.quote(path)} | sed -n '{first},{last}p'"


def _finished_event(step: int, obs: Observation) -> CommandFinished:
    # The event carries exactly the observation's fields (same names), plus the step.
    return CommandFinished(step=step, **dataclasses.asdict(obs))
