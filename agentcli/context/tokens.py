"""Token counting for the context window, whatever the backend.

Each backend counts with its own tokenizer through `Model.count_tokens`: llama.cpp with the
model's tokenizer and chat template, LiteLLM with its counter (tiktoken for OpenAI-style models).
Counting the whole prompt every step would tokenize the history again and again, so the counter
calibrates once how many tokens the chat template adds per message and then counts each message
once, caching by content.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from agentcli.models.base import Message, Model, estimate_message_tokens

CountFn = Callable[[list[Message]], int]

# What a window defaults to when a model cannot say.
FALLBACK_WINDOW = 8192
_CACHE_LIMIT = 8192


@cache
def _tiktoken_encoding(name: str):
    from agentcli.models.offline import prepare_offline_environment

    prepare_offline_environment()  # the encodings LiteLLM bundles; no download
    import tiktoken

    return tiktoken.get_encoding(name)


def tiktoken_count(messages: list[Message], encoding: str = "cl100k_base") -> int:
    """OpenAI's chat accounting (3 tokens per message, 3 to prime the reply), offline."""
    enc = _tiktoken_encoding(encoding)
    return 3 + sum(4 + len(enc.encode(m["content"], disallowed_special=())) for m in messages)


class TokenCounter:
    """Counts messages with a backend's tokenizer, one message at a time, cached.

    A prompt's count is the sum of what each message adds to it: the first (system) message is
    counted alone, with whatever the template puts around a whole prompt; every other message by
    how much it grows a prompt that has an empty system message (and, before a reply, an empty
    user message) ahead of it. Templates that insert a default system prompt when none is given,
    or that insist on user/assistant turns, are thereby counted right, and the sum matches a
    whole-prompt count to within a few tokens.
    """

    def __init__(self, count: CountFn):
        self._count = self._guarded(count)
        self._cache: dict[tuple[str, str], int] = {}
        self._lead: dict[str, tuple[list[Message], int]] = {}
        self.per_message = self.message({"role": "user", "content": ""})

    @classmethod
    def for_model(cls, model: Model) -> TokenCounter:
        return cls(model.count_tokens)

    def _guarded(self, count: CountFn) -> CountFn:
        """The backend's counter, falling back to tiktoken, then to an estimate, if it fails."""
        chain: list[CountFn] = [count, tiktoken_count, estimate_message_tokens]

        def counted(messages: list[Message]) -> int:
            while True:
                try:
                    return int(chain[0](messages))
                except Exception:
                    if len(chain) == 1:
                        raise
                    chain.pop(0)  # a counter that failed once is not asked again

        return counted

    def _context_for(self, role: str) -> tuple[list[Message], int]:
        """The messages a `role` message is measured after, and their own count."""
        if role not in self._lead:
            lead: list[Message] = [{"role": "system", "content": ""}]
            if role == "assistant":
                lead.append({"role": "user", "content": ""})
            self._lead[role] = (lead, self._count(lead))
        return self._lead[role]

    def message(self, message: Message) -> int:
        """Tokens one message adds to a prompt, template included."""
        key = (message["role"], message["content"])
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if message["role"] == "system":
            tokens = self._count([message])
        else:
            lead, base = self._context_for(message["role"])
            tokens = max(0, self._count([*lead, message]) - base)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = tokens
        return tokens

    def messages(self, messages: list[Message]) -> int:
        """Tokens of a whole prompt."""
        return sum(self.message(m) for m in messages)

    def text(self, text: str) -> int:
        """Tokens of `text` as the content of a user message, template excluded."""
        return max(0, self.message({"role": "user", "content": text}) - self.per_message)


def model_window(model: Model, budget: int = 0) -> int:
    """The window to fill: the model's own (GGUF metadata, LiteLLM's model info), capped by `budget`."""
    try:
        window = int(model.context_window)
    except Exception:
        window = 0
    if window <= 0:
        window = FALLBACK_WINDOW
    return min(window, budget) if budget > 0 else window
