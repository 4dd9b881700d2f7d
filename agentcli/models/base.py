"""The `Model` protocol and the values that cross it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict


class Message(TypedDict):
    """One chat message, as every backend takes it."""

    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass
class Usage:
    """Token counts of one call. `prompt_evaluated` is what was computed, not served from a cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_evaluated: int | None = None
    time_to_first_token: float | None = None
    tokens_per_second: float | None = None

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    """A tool the model called: its name and arguments (None where they were not a JSON object; `raw`
    holds them as sent)."""

    name: str
    arguments: dict[str, Any] | None
    raw: str = ""
    more: int = 0  # calls the model made after this one in the same reply, which are not taken


@dataclass
class Reply:
    """What a model returned for one call: text, and the first tool it called where it was offered tools."""

    text: str
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    raw: Any = None
    cached: bool = False  # served from the response cache, not by the model
    tool_call: ToolCall | None = None


# Called with each streamed piece of text; returning True asks the backend to stop generating.
StreamCallback = Callable[[str], bool | None]


class Model(Protocol):
    """A chat model. Backends: litellm, llamacpp, scripted."""

    name: str
    # Whether `complete` can start the reply with a given `prefix` and go on from it (a model run
    # in-process can; a chat API cannot be made to).
    continues_replies: bool
    # Whether `complete` decodes under a `grammar` (GBNF) so that the reply matches it (llama.cpp can;
    # the other backends take the argument and ignore it).
    constrains_replies: bool
    # Whether `complete` offers `tools` to the model, which may answer with a call (`Reply.tool_call`).
    calls_tools: bool

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_token: StreamCallback | None = None,
        temperature: float | None = None,
        prefix: str = "",
        grammar: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        """Return the model's reply to `messages`. Raise `ModelError` subclasses on failure.

        `temperature` overrides the model's own for this call (the loop raises it to get a
        different reply when a greedy one repeats itself). `prefix` is the start of the reply, which
        the model continues (the text returned includes it); ignored unless `continues_replies`.
        `grammar`: GBNF the reply (after `prefix`) must match; ignored unless `constrains_replies`.
        `tools`: OpenAI-style tool schemas offered to the model; ignored unless `calls_tools`."""
        ...

    def count_tokens(self, messages: list[Message]) -> int:
        """Tokens `messages` would take in this model's prompt."""
        ...

    @property
    def context_window(self) -> int:
        """The model's context length in tokens."""
        ...


class ModelError(Exception):
    """A model call failed."""


class ModelGaveUp(ModelError):
    """The model has nothing more to say (a scripted model ran out of replies)."""


class ContextLengthExceeded(ModelError):
    """The prompt did not fit the model's context window."""


class ModelUnavailable(ModelError):
    """The endpoint cannot be reached or refuses us (after retries)."""


class RequestRejected(ModelUnavailable):
    """The provider rejected the request itself (a bad request): the caller's error, which another model in a
    fallback chain would not fix."""


class ModelWrapper:
    """A `Model` in front of another (`wrapped`): what the wrapper does not change is the other's."""

    @property
    def wrapped(self) -> Model:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self.wrapped.name

    @property
    def continues_replies(self) -> bool:
        return self.wrapped.continues_replies

    @property
    def constrains_replies(self) -> bool:
        return getattr(self.wrapped, "constrains_replies", False)

    @property
    def calls_tools(self) -> bool:
        return getattr(self.wrapped, "calls_tools", False)

    @property
    def context_window(self) -> int:
        return self.wrapped.context_window

    def count_tokens(self, messages: list[Message]) -> int:
        return self.wrapped.count_tokens(messages)

    def __getattr__(self, name: str) -> Any:
        # What a backend has beyond the protocol (its temperature, its stops); never during construction.
        if name.startswith("_") or name in ("wrapped", "inner", "active"):
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def estimate_tokens(text: str) -> int:
    """About four characters a token: the last resort when no tokenizer works."""
    return max(1, (len(text) + 3) // 4)


def estimate_message_tokens(messages: list[Message]) -> int:
    """`estimate_tokens` over messages, with a few tokens of framing each."""
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)
