"""Where the loop lets the checks choose between tries (policy `select`, see agent.selection): whether a
step's reply is one of several, sampling the others, and the checks' verdict on each, applied to the
work tree and taken back."""

from __future__ import annotations

from agentcli.agent.asking import ModelCalls, reply_text
from agentcli.agent.edits import sed_targets
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.pysource import syntax_error
from agentcli.agent.run_context import RunContext
from agentcli.agent.selection import CHECK_SECONDS, Candidate, Verdict, choose, with_check
from agentcli.agent.tracebacks import is_test_file
from agentcli.agent.writes import block_write
from agentcli.events import Notice
from agentcli.models.base import Reply

# Seconds a run must have left, beside the checks, for a step to sample more replies to choose from.
SELECTION_MIN_SECONDS = 60.0


class Candidates:
    def __init__(self, run: RunContext, calls: ModelCalls):
        self.run, self.calls = run, calls

    def wanted(self, parsed: ParsedReply) -> bool:
        """Whether this step's reply is one of several for the checks to choose from: it changes code,
        the run has a check and can take a change back, and time is left for more replies."""
        run = self.run
        if run.limits.candidates < 2 or not run.policies.on("select") or not run.facts.takes_back:
            return False
        paths = _changed(parsed)
        # Checks that run a command (the tests, the model's own); whether Python parses is read here.
        running = (run.facts.verifier is not None) + bool(run.state.own_check)
        if not paths or not (running or any(path.endswith(".py") for path in paths)):
            return False
        # Time for the replies and the checks of each, and for the chosen one to run after.
        needed = SELECTION_MIN_SECONDS + run.limits.candidates * running * CHECK_SECONDS
        return not run.limits.timeout or run.limits.timeout - run.elapsed() > needed

    def choose(
        self, step: int, reply: Reply, text: str, parsed: ParsedReply, taken: float | None
    ) -> tuple[Reply, str, ParsedReply]:
        """The reply of several to this step's prompt that the checks judge best; `taken`: the
        temperature the first was sampled at."""
        count = self.run.limits.candidates

        def sample(temperature: float) -> Candidate:
            message = f"sampling another reply for the check to choose from ({count} in all)"
            self.run.events.emit(Notice(message=message))
            extra = self.calls.complete(temperature=temperature)
            self.calls.account(extra)
            extra_text = reply_text(extra)
            return Candidate(extra, extra_text, self.calls.read(extra, extra_text))

        first = Candidate(reply, text, parsed)
        chosen = choose(step, first, sample, self._verdict, self.run.events.emit, count, taken)
        return chosen.reply, chosen.text, chosen.parsed

    def _change(self, parsed: ParsedReply) -> str | None:
        """The command that makes `parsed`'s change; None for a reply that changes no code, a change the
        loop would not make, and a change to a test (the tests are the judge)."""
        run, paths = self.run, _changed(parsed)
        if parsed.file_write is not None:
            written = block_write(run.repo, parsed, run.state.reply_definition)
            command = written[0] if isinstance(written, tuple) else None
        else:
            command = parsed.command
        if command is None or not paths or any(is_test_file(path) for path in paths):
            return None
        return command if run.guards.refusal(command, run.state.task) is None else None

    def _verdict(self, parsed: ParsedReply) -> Verdict | None:
        """The checks' verdict on the work tree with `parsed`'s change made; the tree is put back after.
        None where the change is not made, fails, or the repository's tests say nothing of it."""
        run, change = self.run, self._change(parsed)
        if change is None:
            return None
        with run.tree_kept():
            # In a subshell: a `cd` or `set` in the change stays in it.
            if not run.sandbox.run(f"(\n{change}\n)", timeout=CHECK_SECONDS).ok:
                return None
            verdict = run.facts.verifier() if run.facts.verifier is not None else Verdict(0, 0)
            if verdict is None:
                return None
            if python := [path for path in _changed(parsed) if path.endswith(".py")]:
                verdict = with_check(verdict, all(_parses(run.repo.read(path)) for path in python))
            if run.state.own_check:
                check = f"(\nexport PYTHONDONTWRITEBYTECODE=1\n{run.state.own_check}\n)"
                verdict = with_check(verdict, run.sandbox.run(check, timeout=CHECK_SECONDS).ok)
            return verdict


def _changed(parsed: ParsedReply) -> list[str]:
    """The files `parsed` changes: its block's, or its `sed -i`'s."""
    return [parsed.file_write[0]] if parsed.file_write is not None else sed_targets(parsed.command or "")


def _parses(text: str | None) -> bool:
    """Whether a Python file's text parses (a file the change removed does not)."""
    try:
        return text is not None and syntax_error(text) is None
    except (RecursionError, MemoryError):  # nesting too deep for the parser
        return False
