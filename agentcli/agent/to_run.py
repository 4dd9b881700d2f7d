"""The command a reply comes to once repaired and its block written, and the notes on it; or `Refused`
where a guard will not run it (a fragment for a file, a refused command, the same failing command again)."""

from __future__ import annotations

from agentcli.agent.heredocs import quote_code_heredocs
from agentcli.agent.outcome import Approver, Stop
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.repair import repair
from agentcli.agent.run_context import RunContext
from agentcli.agent.verdicts import Refused
from agentcli.agent.writes import block_write
from agentcli.events import Notice
from agentcli.prompts import render


def command_to_run(run: RunContext, parsed: ParsedReply) -> tuple[str, list[str]]:
    """The command `parsed` comes to and the notes on it; raises `Refused` where none runs."""
    state = run.state
    notes = parsed.notes
    command, repaired = repair(parsed.command or "")
    if repaired:
        notes = [*notes, repaired]
    if run.policies.on("literal-heredoc") and (quoted := quote_code_heredocs(command)) is not None:
        run.policies.fired("literal-heredoc")
        command, notes = quoted[0], [*notes, render("notes/literal_heredoc", files=quoted[1])]
    if parsed.file_write is not None:
        written = block_write(run.repo, parsed, state.begun_definition_in, run.policies.on("missing-import"))
        if isinstance(written, str):
            raise Refused(written, "fragment")
        if written.imported:
            run.policies.fired("missing-import")
        # A command sent beside the edit (the tests, usually) runs right after it.
        command = written.command + (f"\n{command}" if command.strip() else "")
        notes = [*written.notes, *notes]
    refusal = run.guards.refusal(command)
    if refusal is not None:
        raise Refused(refusal)
    if command.strip() == state.last_command and state.last_failure and run.policies.on("repeat-refusal"):
        run.policies.fired("repeat-refusal")
        _refuse_repeat(run, command)
    return command, notes


def user_approved(run: RunContext, approve: Approver, command: str) -> tuple[str, list[str]] | None:
    """The command as the user let it run and the note on their edit of it; None where they declined
    (the model is told so)."""
    decision = approve(command)
    if not decision.run:
        run.events.emit(Notice(message=f"the user declined: {command.splitlines()[0] if command else ''}"))
        run.context.add("user", decision.message or render("user/declined", said="", advice=False))
        return None
    if decision.command and decision.command != command:
        return decision.command, [render("user/edited", command=decision.command)]
    return command, []


def _refuse_repeat(run: RunContext, command: str) -> None:
    """Nothing ran since: the same command fails the same way, and a small model that sees it fail again
    only sends it again. Name what to do instead, as concretely as possible; sent once more after that,
    the run is stuck (and a fresh attempt has a better chance)."""
    state = run.state
    if state.refused == command.strip():
        raise Stop("failed", "stuck: the same failing command was sent again after it was refused")
    state.refused = command.strip()
    path, line = state.failure_at or (None, None)
    if state.failure_at is not None:
        # Told to fix the code at that line, a small model sends the failing command once more.
        run.begin_change(*state.failure_at)
    message = render("refusals/repeated_failure", failure=state.last_failure, path=path, line=line)
    raise Refused(message, "repeat-refusal")
