"""Where the loop lets the checks choose between tries (policy `select`, see agent.selection): whether a
step's reply is one of several, sampling the others, and the checks' verdict on each, applied to the
work tree and taken back."""

from __future__ import annotations

import re
import shlex

from agentcli.agent.asking import ModelCalls, reply_text
from agentcli.agent.edits import sed_targets
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.repair import repair
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

    def wanted(self, parsed: ParsedReply, reply_seconds: float = 0.0) -> bool:
        """Whether this step's reply is one of several for the checks to choose from: it changes code,
        the run has a check and can take a change back, and time is left for more replies (each priced
        at `reply_seconds`, what the first one took: on a slow machine a reply costs a minute)."""
        run = self.run
        if run.limits.candidates < 2 or not run.policies.on("select") or not run.facts.takes_back:
            return False
        paths = _changed(parsed)
        # Checks that run a command (the tests, the model's own); whether Python parses is read here.
        running = (run.facts.verifier is not None) + bool(run.state.own_check)
        if not paths or not (running or any(path.endswith(".py") for path in paths)):
            return False
        # Time for the replies and the checks of each, and for the chosen one to run after.
        count = run.limits.candidates
        needed = SELECTION_MIN_SECONDS + (count - 1) * reply_seconds + count * running * CHECK_SECONDS
        left = run.time_left()
        return left is None or left > needed

    def choose(
        self, step: int, reply: Reply, text: str, parsed: ParsedReply, taken: float | None
    ) -> tuple[Reply, str, ParsedReply]:
        """The reply of several to this step's prompt that the checks judge best; `taken`: the
        temperature the first was sampled at."""
        count = self.run.limits.candidates
        self.run.policies.fired("select")

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

    def _change(self, parsed: ParsedReply) -> tuple[str, list[str]] | None:
        """The command that makes `parsed`'s change and the files it changes (by their paths in the
        repository); None for a reply that changes no code, a change the loop would not make, a change to
        a test (the tests are the judge), and one that could reach past what the work tree puts back (a
        path outside it, a `sed` that writes other files or runs commands)."""
        run, paths = self.run, self._changed_in_repository(parsed)
        if paths is None:
            return None
        if parsed.file_write is not None:
            # Made as the loop would make it, imports included, and no policy fires for a change tried.
            written = block_write(run.repo, parsed, run.state.reply_definition, run.policies.on("missing-import"))
            command = None if isinstance(written, str) else written.command
        else:
            command = repair(parsed.command or "")[0]
            if _SED_WRITES_OR_RUNS.search(command):
                return None
        if command is None or not paths or any(is_test_file(path) for path in paths):
            return None
        return (command, paths) if run.guards.refusal(command) is None else None

    def _changed_in_repository(self, parsed: ParsedReply) -> list[str] | None:
        """The files `parsed` changes, by their paths in the repository (a block's is already; a `sed`'s
        is from where the shell is); None where one leads above the shell's folder or out of the repository."""
        named = _changed(parsed)
        if not all(map(_inside, named)):
            return None
        if parsed.file_write is not None:
            return named
        found = self.run.repo.from_shell(named)
        return [found[path] for path in named] if all(path in found for path in named) else None

    def _verdict(self, parsed: ParsedReply) -> Verdict | None:
        """The checks' verdict on the work tree with `parsed`'s change made; the tree is put back after.
        None where the change is not made, fails, or the repository's tests say nothing of it."""
        run, change = self.run, self._change(parsed)
        if change is None or self.run.facts.ignored(change[1]):
            return None
        command, paths = change
        with run.tree_kept():
            # In a subshell: a `cd` or `set` in the change stays in it.
            if not run.sandbox.run(f"(\n{command}\n)", timeout=CHECK_SECONDS).ok:
                return None
            verdict = run.facts.verifier() if run.facts.verifier is not None else Verdict(0, 0)
            if verdict is None:
                return None
            if python := [path for path in paths if path.endswith(".py")]:
                parses = f"python3 - {' '.join(map(shlex.quote, python))} <<'{_PARSE_MARK}'\n{_PARSE}{_PARSE_MARK}"
                verdict = with_check(verdict, run.repo.run_at_root(parses, timeout=CHECK_SECONDS).ok)
            if run.state.own_check:
                check = f"(\nexport PYTHONDONTWRITEBYTECODE=1\n{run.state.own_check}\n)"
                obs = run.sandbox.run(check, timeout=CHECK_SECONDS)
                if obs.timed_out:
                    run.state.own_check = ""  # a check that cannot finish in time tells nothing apart
                verdict = with_check(verdict, obs.ok)
            return verdict


# Parses each file named, Python's way; fails on the first that does not parse.
_PARSE = "import ast, sys\nfor path in sys.argv[1:]:\n    ast.parse(open(path, 'rb').read(), path)\n"
_PARSE_MARK = "AGENTCLI_PARSE"
# A `sed` command or flag that writes another file (`w`, `W`) or runs a command (`e`).
_SED_WRITES_OR_RUNS = re.compile(r"""(?:^|[;{}\n0-9$/'"]|\s-e\s)\s*[wWe](?:\s|$|['"])""")


def _changed(parsed: ParsedReply) -> list[str]:
    """The files `parsed` changes, as it names them: its block's, or its `sed -i`'s."""
    return [parsed.file_write[0]] if parsed.file_write is not None else sed_targets(parsed.command or "")


def _inside(path: str) -> bool:
    """Whether `path` names a place below where it is taken from, not above it or elsewhere."""
    return not path.startswith(("/", "~", "-")) and ".." not in path.split("/")
