"""Decoding under a grammar (GBNF) at the cost of a few candidates a token, not the whole vocabulary.

llama.cpp's grammar sampler checks every token of the vocabulary (150k for Qwen) against the grammar
at every step. The token the model would choose is almost always allowed anyway, so this filter checks
only the candidates sampling can pick (the most likely one when greedy, the top few when sampling) and
falls back to the full check only when none of them is allowed: a greedy reply is the same as under
the library's grammar sampler (sampled, only allowed tokens among the top 40 are drawn from), at a small
share of its cost.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from agentcli.models.token_choice import TOP_K


class GrammarFilter:
    """One reply's grammar state: `advance` with each token generated, `processor` to filter logits."""

    def __init__(self, llama_cpp: Any, vocab: Any, grammar: str) -> None:
        self._lib = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        if not self._sampler:
            raise ValueError("llama.cpp rejected the grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self.full_checks = 0  # steps that needed the whole vocabulary checked

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def allowed(self, token: int) -> bool:
        """Whether the grammar lets `token` come next (nothing, once closed)."""
        if not self._sampler:
            return False
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(self._one_array))
        return self._one[0].logit != float("-inf")

    def advance(self, token: int) -> bool:
        """Take `token` as generated; False (and the state unchanged) where the grammar forbids it."""
        if not self.allowed(token):
            return False
        self._lib.llama_sampler_accept(self._sampler, token)
        return True

    def processor(self, sampling: bool) -> Callable[[Any, Any], Any]:
        """A llama-cpp-python logits processor keeping the choice inside the grammar (`sampling`: more
        than the most likely token may be picked)."""

        def keep(_input_ids: Any, logits: Any) -> Any:
            best = int(np.argmax(logits))
            if not sampling and self.allowed(best):
                return logits
            top = np.argpartition(logits, -TOP_K)[-TOP_K:]  # all a draw can pick
            allowed = [int(t) for t in top if self.allowed(int(t))]
            if allowed:
                kept = logits[allowed]
                logits[:] = -np.inf
                logits[allowed] = kept
                return logits
            return self._check_all(logits)

        return keep

    def _check_all(self, logits: Any) -> Any:
        """The library's own check over the whole vocabulary (the rare step the top candidates all fail)."""
        self.full_checks += 1
        lib = self._lib
        n = len(logits)
        data = (lib.llama_token_data * n)()
        view = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_float)), shape=(n * 3,))
        view[1::3] = logits  # (id, logit, p) triples: ids are int32, written below
        np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_int32)), shape=(n * 3,))[0::3] = np.arange(n)
        array = lib.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
        lib.llama_sampler_apply(self._sampler, ctypes.byref(array))
        logits[:] = view[1::3]
        return logits
