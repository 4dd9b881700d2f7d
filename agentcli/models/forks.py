"""Where a reply could have gone otherwise: at each token, the runner-up the model nearly chose.

While a local model decodes, a last logits processor notes the two likeliest tokens left at each step
(after any grammar or rule has taken its tokens out). Afterwards the reply's forks are the reply up to
a token followed by the runner-up there, closest calls first: a caller that needs a different reply
(greedy decoding copying itself) continues from a fork and gets the likeliest reply that differs, at
the cost of the tokens after the fork, not a whole new reply. Nothing here reads what the reply says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Forks a reply offers, closest calls first.
MAX_FORKS = 8
# Tokens looked at for the runner-up: a grammar decoding greedily has checked only the first.
RUNNER_UP_CANDIDATES = 8


@dataclass
class ForkRecorder:
    """The likeliest token and the likeliest allowed runner-up (ids and logits) at each step of one reply.

    `allowed`: whether a token may come next where a grammar rules (one that decodes greedily leaves the
    logits of the tokens it rules out as they were)."""

    allowed: Callable[[int], bool] | None = None
    steps: list[tuple[int, float, int, float]] = field(default_factory=list)

    def processor(self) -> Callable[[Any, Any], Any]:
        """A llama-cpp-python logits processor that notes them and changes nothing."""

        def note(_input_ids: Any, logits: Any) -> Any:
            top = np.argpartition(logits, -RUNNER_UP_CANDIDATES)[-RUNNER_UP_CANDIDATES:]
            first, *rest = (int(token) for token in top[np.argsort(-logits[top])])
            runner_up = next((t for t in rest if self.allowed is None or self.allowed(t)), None)
            if runner_up is None:
                self.steps.append((first, float(logits[first]), -1, -np.inf))
            else:
                self.steps.append((first, float(logits[first]), runner_up, float(logits[runner_up])))
            return logits

        return note

    def forks(self, chosen: list[int], kept: str, text_of: Callable[[list[int]], bytes]) -> list[str]:
        """The reply's forks as text (reply up to a token, then the runner-up there), closest first.

        `chosen`: the tokens the reply was made of; `kept`: the text kept of it (a stop sequence or the
        caller may have cut it short); `text_of`: the bytes of a token sequence. A fork at or past the end of
        the kept text, one whose runner-up was ruled out, or one that is not whole UTF-8 is left out."""
        calls: list[tuple[float, int, int]] = []
        for index, (token, (first, first_logit, second, second_logit)) in enumerate(
            zip(chosen, self.steps, strict=False)
        ):
            runner_up, runner_up_logit = (second, second_logit) if token == first else (first, first_logit)
            if not np.isfinite(runner_up_logit):
                continue  # the only token allowed here
            own = first_logit if token == first else second_logit if token == second else runner_up_logit
            calls.append((own - runner_up_logit, index, runner_up))
        found: list[str] = []
        for _, index, runner_up in sorted(calls):
            try:
                before = text_of(chosen[:index]).decode("utf-8")
                fork = before + text_of([runner_up]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(before) < len(kept) and kept.startswith(before) and fork != before and not kept.startswith(fork):
                found.append(fork)
                if len(found) == MAX_FORKS:
                    break
        return found
