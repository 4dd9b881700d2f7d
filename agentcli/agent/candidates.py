"""Where the loop lets the check choose between tries (policy `select`, see agent.selection): whether a
step's reply is one of several, sampling the others, and the check's verdict on each, applied to the
work tree and taken back."""

from __future__ import annotations

from agentcli.agent.asking import ModelCalls, reply_text
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.run_context import RunContext
from agentcli.agent.selection import CHECK_SECONDS, Candidate, Verdict, choose
from agentcli.agent.tracebacks import is_test_file
from agentcli.agent.writes import block_write
from agentcli.events import Notice
from agentcli.models.base import Reply

# Seconds a run must have left for a step to sample more replies for the check to choose from.
SELECTION_MIN_SECONDS = 60.0


class Candidates:
    def __init__(self, run: RunContext, calls: ModelCalls):
        self.run, self.calls = run, calls

    def wanted(self, parsed: ParsedReply) -> bool:
        """Whether this step's reply is one of several for the check to choose from: it writes a file,
        the run has a check, and time is left for more replies."""
        run = self.run
        if parsed.file_write is None or run.facts.verifier is None or not run.policies.on("select"):
            return False
        # Time for the replies and a check of each, and for the chosen one to run after.
        needed = SELECTION_MIN_SECONDS + run.limits.candidates * CHECK_SECONDS
        left = run.limits.timeout - run.elapsed() if run.limits.timeout else None
        return run.limits.candidates > 1 and (left is None or left > needed)

    def choose(
        self, step: int, reply: Reply, text: str, parsed: ParsedReply, taken: float | None
    ) -> tuple[Reply, str, ParsedReply]:
        """The reply of several to this step's prompt that the check judges best; `taken`: the
        temperature the first was sampled at."""
        count = self.run.limits.candidates

        def sample(temperature: float) -> Candidate:
            self.run.events.emit(
                Notice(message=f"sampling another reply for the tests to choose from ({count} in all)")
            )
            extra = self.calls.complete(temperature=temperature)
            self.calls.account(extra)
            extra_text = reply_text(extra)
            return Candidate(extra, extra_text, self.calls.read(extra, extra_text))

        first = Candidate(reply, text, parsed)
        chosen = choose(step, first, sample, self._verdict, self.run.events.emit, count, taken)
        return chosen.reply, chosen.text, chosen.parsed

    def _verdict(self, parsed: ParsedReply) -> Verdict | None:
        """The check's verdict on the work tree with `parsed`'s file write applied; the tree is put back.
        None for a write the loop would not make, and for a write to a test (the tests are the judge)."""
        run = self.run
        if parsed.file_write is None or run.facts.verifier is None or is_test_file(parsed.file_write[0]):
            return None
        written = block_write(run.repo, parsed, run.state.reply_definition)
        if not isinstance(written, tuple) or run.guards.refusal(written[0], run.state.task) is not None:
            return None
        with run.tree_kept():
            if not run.sandbox.run(written[0]).ok:
                return None
            return run.facts.verifier()
