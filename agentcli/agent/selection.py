"""The sandbox chooses between tries (policy `select`): at a step whose reply changes code (a file
written, a `sed -i`), where the run has a check it can run (whether the Python it changes still
parses, the repository's tests, the model's own check: the last program or tests it ran that failed),
more replies are sampled, each is applied to the work tree in turn and taken back, the checks run on
each, and the reply with the best verdict goes on.

It never reads the task: the verdict is the sandbox's. With llama.cpp the candidates share the
evaluated prompt (the backend reuses the KV cache of the longest common prefix), so each costs only
its own tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agentcli.agent.parsing import ParsedReply, normalised
from agentcli.events import CandidateScored, Event
from agentcli.models.base import Reply

# pytest's summary line: "2 failed, 3 passed in 0.1s", "1 error", "5 passed".
_COUNT = re.compile(r"(\d+) (failed|passed|errors?)\b")
# Seconds the check may take on one candidate (one that hangs has the worst verdict).
CHECK_SECONDS = 30.0
# Sampling temperatures of the extra candidates: from the first, in steps. The backend seeds a sampled
# reply from its prompt, so candidates of one prompt differ by temperature, none at the first reply's.
FIRST_TEMPERATURE = 0.7
TEMPERATURE_STEP = 0.1
# Samples drawn at most for each extra candidate: the 1.5B at 0.7 often writes its first reply again.
DRAWS_PER_CANDIDATE = 3


@dataclass(frozen=True)
class Verdict:
    """What the check said of a candidate: tests failing (errors count as failing) and passing."""

    failed: int
    passed: int

    @property
    def rank(self) -> tuple[int, int]:
        """Lower is better: fewer failing, then more passing."""
        return self.failed, -self.passed


# Runs the check on the work tree as it is now; None where it cannot say (no tests collected, a timeout).
Verifier = Callable[[], Verdict | None]


def with_check(tests: Verdict | None, passed: bool) -> Verdict:
    """The verdict of the repository's tests (None where the run has none) with one more check counted."""
    tests = tests or Verdict(0, 0)
    return Verdict(tests.failed + (not passed), tests.passed + passed)


def pytest_verdict(exit_code: int, output: str, timed_out: bool = False) -> Verdict | None:
    """The verdict of a pytest run from its exit status and summary; None where it says nothing (timed
    out, interrupted by an error while collecting, nothing collected, pytest missing): such a candidate
    ranks below any that ran the tests, since the tests it broke did not run at all."""
    if timed_out or exit_code not in (0, 1):
        return None
    counts = {"failed": 0, "passed": 0, "errors": 0}
    for number, kind in _COUNT.findall(output.splitlines()[-1] if output.strip() else ""):
        counts["errors" if kind.startswith("error") else kind] += int(number)
    if not any(counts.values()):
        return None if exit_code else Verdict(0, 0)
    return Verdict(counts["failed"] + counts["errors"], counts["passed"])


def temperatures(count: int, taken: float | None) -> list[float]:
    """`count` sampling temperatures for extra candidates, none equal to `taken` (the first reply's)."""
    found: list[float] = []
    value = FIRST_TEMPERATURE
    while len(found) < count:
        if taken is None or abs(value - taken) > 1e-9:
            found.append(round(value, 2))
        value += TEMPERATURE_STEP
    return found


def best(verdicts: list[Verdict | None]) -> int:
    """The index of the candidate to keep: the best verdict; ties and unknowns go to the earliest (the
    first is the model's own reply)."""
    ranked = [(v.rank if v is not None else (float("inf"), 0), i) for i, v in enumerate(verdicts)]
    return min(ranked)[1]


@dataclass(frozen=True)
class Candidate:
    """One reply to a step's prompt: as returned, as it reads, and the action it asks for."""

    reply: Reply
    text: str
    parsed: ParsedReply


def choose(
    step: int,
    first: Candidate,
    sample: Callable[[float], Candidate],
    judge: Callable[[ParsedReply], Verdict | None],
    emit: Callable[[Event], None],
    count: int,
    taken: float | None = None,
) -> Candidate:
    """`first` (sampled at `taken`) and up to `count - 1` more replies `sample`d at other temperatures,
    each judged by the check (`judge` applies its change, runs the check and takes the change back); the
    best, every one of them emitted with its verdict and, for those not kept, what it cost. A sample
    that repeats one held already says nothing new: it is dropped and another drawn, at a higher
    temperature, up to `DRAWS_PER_CANDIDATE` draws for each candidate wanted."""
    candidates = [first]
    for temperature in temperatures((count - 1) * DRAWS_PER_CANDIDATE, taken):
        if len(candidates) == count:
            break
        drawn = sample(temperature)
        held = [normalised(candidate.text) for candidate in candidates]
        if (text := normalised(drawn.text)) not in held:
            candidates.append(drawn)
            continue
        usage = drawn.reply.usage
        emit(
            CandidateScored(
                step=step, index=held.index(text), text=drawn.text, failed=None, passed=None, chosen=False,
                repeated=True, prompt_evaluated=usage.prompt_evaluated, prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens, cost=drawn.reply.cost,
            )
        )  # fmt: skip
    verdicts = [judge(candidate.parsed) for candidate in candidates]
    chosen = best(verdicts)
    for index, (candidate, verdict) in enumerate(zip(candidates, verdicts, strict=True)):
        emit(
            CandidateScored(
                step=step,
                index=index,
                text=candidate.text,
                failed=verdict.failed if verdict else None,
                passed=verdict.passed if verdict else None,
                chosen=index == chosen,
                prompt_evaluated=candidate.reply.usage.prompt_evaluated,
                # The one kept is the step's reply, whose model_replied event counts its tokens.
                prompt_tokens=0 if index == chosen else candidate.reply.usage.prompt_tokens,
                completion_tokens=0 if index == chosen else candidate.reply.usage.completion_tokens,
                cost=0.0 if index == chosen else candidate.reply.cost,
            )
        )
    return candidates[chosen]
