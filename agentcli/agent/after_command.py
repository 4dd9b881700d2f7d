"""What the loop notes after a command the model sent, one hook a note each, in the order the model
reads them (what the command will edit or overwrite is read before it runs, for those notes). Each hook
asks its policy; the loop knows none of them by name."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.agent.begun import read_file
from agentcli.agent.checking import command_lines, only_changes, runs_check
from agentcli.agent.edit_notes import sed_report
from agentcli.agent.edits import describe_change, sed_targets
from agentcli.agent.focus import run_focus
from agentcli.agent.guards import already_done
from agentcli.agent.missing_imports import completed_imports
from agentcli.agent.observation import finished_event, format_observation
from agentcli.agent.outcome import Stop
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.run_context import RunContext
from agentcli.agent.stuck import StuckDetector
from agentcli.agent.tracebacks import is_test_file
from agentcli.events import Nudge
from agentcli.prompts import render
from agentcli.sandbox.base import Observation

# `python3 -c "import os; for f in ...: ..."`: compound statements cannot follow `;` on one line.
_ONE_LINE_PYTHON = re.compile(r"^\s*python3?\s+-c\s", re.MULTILINE)


@dataclass
class Ran:
    """A command of the model's and what came of it, as the hooks after it see it."""

    parsed: ParsedReply
    command: str
    obs: Observation | None = None
    ok: bool = False  # it succeeded, or its failure is settled (nothing to commit, a server stopped)
    edited: dict[str, str | None] = field(default_factory=dict)  # files its `sed` edits, as they were
    overwritten: dict[str, str] = field(default_factory=dict)  # files its `>` overwrites, as they were
    block_file_before: str | None = None  # the file its block writes, as it was (None: no block, or a new file)
    tree_before: str | None = None  # the work tree's mark before it, where its changes are to be shown
    changed: dict[str, str | None] = field(default_factory=dict)  # files whose changes were shown, as they were


def before_command(run: RunContext, ran: Ran) -> None:
    """Read what the command is about to change, for the notes after it."""
    ran.edited = {path: run.repo.read(path) for path in run.repo.from_shell(sed_targets(ran.command)).values()}
    # Our own write of a block was judged before; the model's `>` is judged by what it did.
    ran.overwritten = {} if ran.parsed.file_write is not None else run.guards.before_overwrites(ran.command)
    if ran.parsed.file_write is not None:
        ran.block_file_before = run.repo.read(ran.parsed.file_write[0])
    # A block's write and an in-place `sed` have their own notes of what they changed.
    changes = run.facts.tree_changes
    if changes is not None and run.policies.on("changes-shown") and ran.parsed.file_write is None and not ran.edited:
        ran.tree_before = changes.mark()


def settled(run: RunContext, command: str, obs: Observation, server: str | None) -> str | None:
    """Why a failed command is no failure (git's "nothing to commit", a server stopped), or None."""
    note = (
        run.policies.fired_if("nothing-to-commit", already_done(command, obs))
        if run.policies.on("nothing-to-commit")
        else None
    )
    if server and obs.timed_out:
        note = render("notes/server_stopped", server=server, seconds=obs.duration)
    return note


def observe(run: RunContext, ran: Ran, server: str | None, step: int, notes: list[str]) -> None:
    """After the command ran: the run's state, the notes on it, the event, and what the model is shown."""
    assert ran.obs is not None
    run.commands_ran.append(ran.command)
    settled_why = settled(run, ran.command, ran.obs, server)
    ran.ok = ran.obs.ok or settled_why is not None
    record(run, ran)
    notes = [*notes, *([settled_why] if settled_why else []), *notes_after(run, ran)]
    run.events.emit(finished_event(step, ran.obs))
    shown, repeated = shown_output(run, ran, step)
    hint = run.policies.fired_if("next-step", run.progress().hint()) if run.policies.on("next-step") else ""
    run.context.add("user", format_observation(shown, [*notes, *repeated], hint))


def record(run: RunContext, ran: Ran) -> None:
    """The run's state after the command: the plan's progress, and how the last command went."""
    state, obs = run.state, ran.obs
    assert obs is not None
    if ran.ok:
        # A block of several lines is several steps of the plan done at once (counted as one, the
        # next-step hint sends the model to redo them); a Python script is the whole plan as code.
        script = ran.parsed.code is not None and ran.parsed.file_write is None
        state.commands_since_plan += len(run.outcome.plan) if script else command_lines(ran.command)
    elif run.progress().observing_due():
        state.commands_since_plan += 1
    # A block the same as its file changed nothing: there is no change to look at.
    copied_back = _written_back_unchanged(run, ran)
    if copied_back is not None:
        state.copied_back.add(copied_back)
    state.unchecked = only_changes(ran.command) and copied_back is None
    state.last_exit_code = 0 if ran.ok else obs.exit_code if not obs.timed_out else 124
    state.last_command = ran.command.strip()
    state.last_failure = "" if ran.ok else failure_summary(obs)
    # A check that ran past its time would only run past it again for every candidate.
    if not ran.ok and not obs.timed_out and runs_check(ran.command) and run.guards.server(ran.command) is None:
        state.own_check = ran.command.strip()


def _written_back_unchanged(run: RunContext, ran: Ran) -> str | None:
    """The file, where the command was a block's write alone to a file that holds just what it held before."""
    write = ran.parsed.file_write
    if write is None or ran.block_file_before is None:
        return None  # no block, or a new file
    now = run.repo.read(write[0])
    # Other commands beside the write may have changed other files.
    if now != ran.block_file_before or ran.command != run.repo.write_command(write[0], now, run.repo.shell_folder()):
        return None
    return write[0]


def notes_after(run: RunContext, ran: Ran) -> list[str]:
    """Every hook's notes on the command that ran, in order."""
    return [note for hook in AFTER for note in hook(run, ran)]


def _sed_report(run: RunContext, ran: Ran) -> list[str]:
    return sed_report(run.repo, ran.command, ran.edited) if ran.edited and _obs(ran).ok else []


def _changes_shown(run: RunContext, ran: Ran) -> list[str]:
    """The diff of each text file the command changed (policy `changes-shown`): a redirect, a script or a
    move changes files as silently as it can, and a small model goes on as if it had done what it meant."""
    changes = run.facts.tree_changes
    if ran.tree_before is None or changes is None:
        return []
    found = changes.since(ran.tree_before)
    ran.changed = {change.path: change.before for change in found}
    limit = max(12, 40 // max(1, len(found)))
    return run.policies.fired_if(
        "changes-shown", [describe_change(path, before, after, limit) for path, before, after in found]
    )


def _missing_imports(run: RunContext, ran: Ran) -> list[str]:
    """The standard-library imports that a Python file the command changed lacks since, added (policy
    `missing-import`; a block's write gets them before it is written). The files are its `sed` targets and
    those `_changes_shown`, which runs first, found. Where the user approves each command, none is
    written that they did not see."""
    if not run.policies.on("missing-import") or run.asks_approval:
        return []
    notes = []
    for path, before in {**ran.changed, **ran.edited}.items():
        text = run.repo.read(path)
        if text is None or (imported := completed_imports(path, text, before)) is None:
            continue
        if run.repo.run_at_root(run.repo.write_command(path, imported.text)).ok:
            notes.append(run.policies.fired_if("missing-import", imported.note))
            # The output above came before the import: the same command may run again.
            run.state.last_failure = ""
    return notes


def _lossy_overwrites(run: RunContext, ran: Ran) -> list[str]:
    return run.guards.undo_lossy_overwrites(ran.command, ran.overwritten)


def _one_line_python(run: RunContext, ran: Ran) -> list[str]:
    obs = _obs(ran)
    failed = not obs.ok and _ONE_LINE_PYTHON.search(ran.command) and "SyntaxError" in obs.output
    return [render("notes/one_line_python")] if failed else []


def _failure_advice(run: RunContext, ran: Ran) -> list[str]:
    advice = None if ran.ok else run.guards.failure_advice(_obs(ran))
    return [advice] if advice else []


def _failure_focus(run: RunContext, ran: Ran) -> list[str]:
    """The code a failure points to; the loop begins the fix there if the same command is sent again."""
    focus = run_focus(run, _obs(ran))
    run.state.failure_at = None
    if focus is None:
        return []
    path, line, context = focus
    # The code to fix, never the test: small models told "fix test_x.py" rewrite the test.
    run.state.failure_at = None if is_test_file(path) else (path, line)
    return [context]


def shown_output(run: RunContext, ran: Ran, step: int) -> tuple[Observation, list[str]]:
    """The output as the model is shown it, and the note on it: output shown already is only pointed to
    (policy `repeat-output`), and a file read again begins its change."""
    obs = _obs(ran)
    if ran.parsed.file_write is not None or not run.policies.on("repeat-output"):
        return obs, []
    if (repeat := run.recent_outputs.seen(step, ran.command, obs)) is None:
        return obs, []
    run.policies.fired("repeat-output")
    if (read := read_file(ran.command)) is not None and (path := run.repo.from_shell([read[0]]).get(read[0])):
        run.begin_change(path, read[1])  # the path `cat` read, from where the shell is
    return repeat[0], [repeat[1]]


AFTER: tuple[Callable[[RunContext, Ran], list[str]], ...] = (
    _sed_report,
    _lossy_overwrites,
    _changes_shown,
    _missing_imports,
    _one_line_python,
    _failure_advice,
    _failure_focus,
)


def _obs(ran: Ran) -> Observation:
    assert ran.obs is not None
    return ran.obs


def failure_summary(obs: Observation) -> str:
    if obs.timed_out:
        return "it timed out"
    lines = [line.strip() for line in obs.output.splitlines() if line.strip()]
    last = f": {lines[-1][:200]}" if lines else ""
    return f"exit {obs.exit_code}{last}"


def check_stuck(ctx: RunContext, stuck: StuckDetector, step: int, command: str, obs: Observation) -> None:
    """Record the command for policy `stuck`: the first time the run goes round in circles the model
    is told, the second time the run stops."""
    stuck.record(command, obs.output, obs.exit_code)
    verdict = stuck.check() if ctx.policies.on("stuck") else None
    if verdict is None:
        return
    ctx.policies.fired("stuck")
    action, reason = verdict
    if action == "stop":
        raise Stop("failed", f"stuck: {reason}")
    ctx.events.emit(Nudge(step=step, reason=reason))
    ctx.context.add("user", StuckDetector.advice(reason))
