"""Decoding that drafts tokens from the conversation (prompt lookup) and checks them in one batch.

A reply often copies what the conversation holds: a file written back with one line changed, a path,
a command run again. The tokens that followed the latest earlier occurrence of the reply's last few
tokens are a likely continuation. On a CPU, llama.cpp evaluates a short batch of tokens in about the
time it takes to generate one (one pass over the weights either way) on many machines, so the draft is
evaluated in one batch with the token before it, and every drafted token the model's own choice agrees
with is a token not generated alone. The model's choice (greedy, or a draw: see `token_choice`)
decides every token; only llama.cpp computes a batch's logits in another order than one token's, and
they differ a little, so where two tokens nearly tie (or a draw falls near the edge between two) the
pick may differ from an undrafted run's. The drafts depend on the tokens alone, never on timing, so a
run is repeatable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

# The n-gram looked up: two tokens match prose too often for a draft worth checking.
NGRAM = 3
# Drafted tokens at most, and at first; a draft taken whole doubles the next, one refused at its first
# token halves it (a batch much longer than the weights' pass costs more than it can save).
MOST_DRAFTED = 12
FIRST_DRAFTED = 4


class Drafter:
    """The tokens that followed the latest earlier occurrence of the last `NGRAM` tokens."""

    def __init__(self, tokens: list[int]) -> None:
        self.tokens: list[int] = []
        self._after: dict[tuple[int, ...], int] = {}  # an n-gram -> the position after its latest occurrence
        self.length = FIRST_DRAFTED
        for token in tokens:
            self.add(token)

    def add(self, token: int) -> None:
        self.tokens.append(token)
        if len(self.tokens) > NGRAM:
            # Indexed one token late: the n-gram that ends the sequence must find an earlier occurrence.
            end = len(self.tokens) - 1
            self._after[tuple(self.tokens[end - NGRAM : end])] = end

    def draft(self) -> list[int]:
        """The tokens to check next (none where the last n-gram occurred nowhere before)."""
        if len(self.tokens) < NGRAM:
            return []
        start = self._after.get(tuple(self.tokens[-NGRAM:]))
        return [] if start is None else self.tokens[start : start + self.length]

    def taken(self, drafted: int, accepted: int) -> None:
        """Adapt the draft's length to how much of the last one the model took."""
        if drafted and accepted == drafted:
            self.length = min(MOST_DRAFTED, self.length * 2)
        elif drafted and accepted == 0:
            self.length = max(1, self.length // 2)


def decode(
    llama: Any, tokens: list[int], choose: Callable[[Any], int], stats: dict[str, int] | None = None
) -> Iterator[tuple[int, Any]]:
    """The tokens after the prompt `tokens`, each with the raw logits it was chosen from; `choose`
    picks the token from a copy of them (a grammar may forbid some), once for each position. The
    caller stops when it has enough (closing the generator); `llama`'s KV cache then holds the prompt
    and the tokens it took, and llama-cpp-python's own bookkeeping (`n_tokens`, `input_ids`) says so,
    as after `Llama.generate`: the next prompt reuses their longest common prefix. `stats` counts the
    tokens drafted and accepted."""
    import numpy as np  # comes with llama-cpp-python

    n_vocab = llama.n_vocab()
    pending = _evaluate_prompt(llama, tokens)
    drafter = Drafter(tokens)
    stats = stats if stats is not None else {}
    stats.setdefault("drafted", 0)
    stats.setdefault("accepted", 0)
    while True:
        past = llama.n_tokens
        draft = drafter.draft()[: max(0, llama.n_ctx() - past - 1)]  # never past the context's end
        batch = [pending, *draft]
        llama._batch.set_batch(batch=batch, n_past=past, logits_all=True)
        llama._ctx.decode(llama._batch)
        kept = 1  # positions of `batch` whose tokens stand: `pending`, then each draft token taken
        try:
            for i in range(len(batch)):
                raw = np.ctypeslib.as_array(llama._ctx.get_logits_ith(i), shape=(n_vocab,)).copy()
                token = choose(raw.copy())
                yield token, raw
                drafter.add(token)
                if i < len(draft) and token == draft[i]:
                    kept += 1
                    continue
                pending = token
                break
        finally:
            llama.input_ids[past : past + kept] = batch[:kept]
            llama.n_tokens = past + kept
            llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)  # the draft tokens refused
            llama._requires_eval = True  # the logits left are a batch's, not the last token's
            stats["drafted"] += len(draft)
            stats["accepted"] += kept - 1
            drafter.taken(len(draft), kept - 1)


def _evaluate_prompt(llama: Any, tokens: list[int]) -> int:
    """Evaluate all of `tokens` but the last, reusing the longest prefix the KV cache holds; the last
    is returned, to be evaluated with the first draft (its logits choose the reply's first token)."""
    prefix = _reused(llama, tokens)
    if prefix == 0 or not llama._ctx.kv_cache_seq_rm(-1, prefix, -1):
        llama.reset()
        prefix = 0
    llama.n_tokens = prefix
    if prefix < len(tokens) - 1:
        llama.eval(tokens[prefix:-1])
    return tokens[-1]


def evaluated(llama: Any, tokens: list[int]) -> int:
    """How many prompt tokens `decode` evaluates for `tokens` (the last always, with the first draft)."""
    return len(tokens) - _reused(llama, tokens)


def _reused(llama: Any, tokens: list[int]) -> int:
    """The prompt tokens the cache holds that `decode` keeps: all but the last at most."""
    return min(cached_prefix(llama, tokens), len(tokens) - 1)


def cached_prefix(llama: Any, tokens: list[int]) -> int:
    """How many of `tokens`, from the start, `llama`'s KV cache holds already."""
    prefix = 0
    for a, b in zip(llama.input_ids[: llama.n_tokens].tolist(), tokens, strict=False):
        if a != b:
            break
        prefix += 1
    return prefix
