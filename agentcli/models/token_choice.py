"""How the local backend's own decoder picks a token from a row of logits: greedy, or sampled.

Sampling keeps llama-cpp-python's chain and settings (top-k 40, top-p, min-p 0.05, then the
temperature) and draws from a generator seeded per reply, so a reply is repeatable. Each position of a
reply takes one draw (none where one token is left) whether or not a draft foresaw its token, which is
why checking a draft stays exact when sampling: the drafted token stands where the draw picks it, with
the probability the model gives it (speculative sampling with a draft of one certain token per
position).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

TOP_K = 40
MIN_P = 0.05

Choose = Callable[[Any], int]


def _processed(processors: Any, logits: Any) -> Any:
    for processor in processors or ():
        logits = processor(None, logits)
    return logits


def greedy(processors: Any) -> Choose:
    """The most likely token after the processors (a grammar, the empty-block rule)."""

    def choose(logits: Any) -> int:
        return int(np.argmax(_processed(processors, logits)))

    return choose


def sampled(processors: Any, temperature: float, top_p: float, seed: int) -> Choose:
    """A token drawn from `distribution` of the processed logits, by a generator seeded with `seed`."""
    generator = np.random.default_rng(seed)

    def choose(logits: Any) -> int:
        tokens, probabilities = distribution(_processed(processors, logits), temperature, top_p)
        return int(tokens[generator.choice(len(tokens), p=probabilities)]) if len(tokens) > 1 else int(tokens[0])

    return choose


def distribution(logits: Any, temperature: float, top_p: float) -> tuple[Any, Any]:
    """The tokens a draw can pick and their probabilities, as llama.cpp's sampler chain makes them: the
    top `TOP_K`, the fewest of those whose probability adds up to `top_p`, those at least `MIN_P` times
    as likely as the most likely, then softmax at `temperature`. Most likely first."""
    top = np.argpartition(logits, -TOP_K)[-TOP_K:] if len(logits) > TOP_K else np.arange(len(logits))
    top = top[np.argsort(-logits[top], kind="stable")]
    top = top[np.isfinite(logits[top])]
    if len(top) <= 1:
        return (top, np.ones(1)) if len(top) else (np.array([int(np.argmax(logits))]), np.ones(1))
    kept = logits[top].astype(np.float64)
    probabilities = np.exp(kept - kept[0])
    probabilities /= probabilities.sum()
    # The token that carries the sum past top_p stays, as in llama.cpp.
    within = int(np.searchsorted(np.cumsum(probabilities), top_p)) + 1
    within = min(within, int(np.sum(probabilities >= MIN_P * probabilities[0])))
    weights = np.exp((kept[:within] - kept[0]) / temperature)
    return top[:within], weights / weights.sum()
