"""Any provider LiteLLM speaks to: hosted APIs, or an OpenAI-compatible server given by `api_base`."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from typing import Any

from agentcli.models.base import (
    ContextLengthExceeded,
    Message,
    ModelUnavailable,
    Reply,
    RequestRejected,
    StreamCallback,
    ToolCall,
    Usage,
    estimate_message_tokens,
)
from agentcli.models.offline import prepare_offline_environment
from agentcli.models.ratelimit import RateLimiter
from agentcli.models.retry import Retryable, RetryPolicy, call_with_retries, parse_retry_after
from agentcli.models.stream import StreamRelay

DEFAULT_CONTEXT_WINDOW = 32768
REQUEST_TIMEOUT = 600.0


def _litellm():
    prepare_offline_environment()
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class LiteLLMModel:
    """A chat model reached through LiteLLM, with our own bounded retries (LiteLLM's are off)."""

    def __init__(
        self,
        name: str,
        *,
        api_base: str = "",
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        context_window: int | None = None,
        retry: RetryPolicy | None = None,
        on_retry: Callable[[int, float, Exception], None] | None = None,
        timeout: float = REQUEST_TIMEOUT,
        limiter: RateLimiter | None = None,
        tool_calls: str = "auto",
    ):
        """`tool_calls`: offer the tools a call gives as native tools: "on", "off", or "auto" (where
        LiteLLM knows the model supports function calling)."""
        self.name = name
        self.api_base = api_base
        # A local OpenAI-compatible server takes any key, but the client insists on one.
        self.api_key = api_key if api_key is not None else ("none" if api_base and not _provider_key() else None)
        self.temperature = temperature
        self.seed = seed  # sent where set: providers that take a seed sample reproducibly with it
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self.timeout = timeout  # seconds one request may take (between streamed pieces: one read)
        self.limiter = limiter
        self._window = context_window
        # A chat API answers messages; it cannot be made to go on from a reply begun for it.
        self.continues_replies = False
        self.constrains_replies = False
        self.tool_calls = tool_calls
        self._calls_tools: bool | None = None

    @property
    def calls_tools(self) -> bool:
        if self._calls_tools is None:
            self._calls_tools = self.tool_calls == "on"
            if self.tool_calls == "auto":
                try:
                    self._calls_tools = bool(_litellm().supports_function_calling(model=self.name))
                except Exception:  # unknown to LiteLLM's map: the text protocol
                    self._calls_tools = False
        return self._calls_tools

    @property
    def context_window(self) -> int:
        if self._window is None:
            self._window = DEFAULT_CONTEXT_WINDOW
            try:
                info = _litellm().get_model_info(self.name)
                self._window = int(info.get("max_input_tokens") or info.get("max_tokens") or DEFAULT_CONTEXT_WINDOW)
            except Exception:  # unknown to LiteLLM's map: keep the default
                pass
        return self._window

    def count_tokens(self, messages: list[Message]) -> int:
        litellm = _litellm()
        try:
            return int(litellm.token_counter(model=self.name, messages=messages))
        except Exception:
            return int(litellm.token_counter(model="gpt-4", messages=messages))

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
        # A stream cut half-way and tried again starts over: what was shown already is not shown twice.
        relay = StreamRelay(on_token) if on_token is not None else None

        def attempt() -> Reply:
            offered = tools if tools and self.calls_tools else None
            return self._call(messages, max_tokens, relay.attempt() if relay else None, temperature, offered)

        def report(attempt_no: int, delay: float, error: Retryable) -> None:
            if self.on_retry is not None:
                self.on_retry(attempt_no, delay, error)

        try:
            return call_with_retries(attempt, self.retry, report)
        except Retryable as e:
            raise ModelUnavailable(f"{self.name}: {e} (gave up after {self.retry.attempts} tries)") from None

    def _request(
        self,
        messages: list[Message],
        max_tokens: int | None,
        stream: bool,
        temperature: float | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "temperature": self.temperature if temperature is None else temperature,
            "timeout": self.timeout,
            "max_retries": 0,
            "num_retries": 0,
            "stream": stream,
        }
        if max_tokens:
            request["max_tokens"] = max_tokens
        if self.seed:
            request["seed"] = self.seed
        if self.api_base:
            request["api_base"] = self.api_base
        if self.api_key:
            request["api_key"] = self.api_key
        if stream:
            request["stream_options"] = {"include_usage": True}
        if tools:
            request["tools"] = tools
            request["tool_choice"] = "auto"  # a reply in text is read by the text protocol
        return request

    def _call(
        self,
        messages: list[Message],
        max_tokens: int | None,
        on_token: StreamCallback | None,
        temperature: float | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        litellm = _litellm()
        estimate = 0
        if self.limiter is not None and self.limiter.active:
            estimate = estimate_message_tokens(messages) + (max_tokens or 0)
            self.limiter.acquire(estimate)
        started = time.monotonic()
        try:
            if on_token is None:
                response = litellm.completion(
                    **self._request(messages, max_tokens, stream=False, temperature=temperature, tools=tools)
                )
                message = response.choices[0].message
                text = message.content or ""
                calls = getattr(message, "tool_calls", None) or []
                call = (
                    _tool_call(calls[0].function.name, calls[0].function.arguments, len(calls) - 1) if calls else None
                )
                usage = _usage(getattr(response, "usage", None))
                first_token = None
            else:
                text, call, usage, first_token, response = self._stream(
                    litellm, messages, max_tokens, on_token, started, temperature, tools
                )
        except Exception as error:  # translated into our own errors below
            raise _translate(litellm, error) from error
        if not text and call is None and usage.completion_tokens == 0:
            # Nothing said and no token spent on it: an empty body, or JSON where a stream was due.
            raise Retryable("the server sent an empty reply")
        if usage.prompt_tokens == 0:
            usage.prompt_tokens = self.count_tokens(messages)
        if usage.completion_tokens == 0 and (text or call is not None):
            said = text + (call.raw if call is not None else "")
            usage.completion_tokens = int(litellm.token_counter(model="gpt-4", text=said))
        usage.time_to_first_token = first_token
        if estimate:
            self.limiter.settle(estimate, usage.total)
        elapsed = time.monotonic() - started
        if elapsed > 0 and usage.completion_tokens:
            usage.tokens_per_second = usage.completion_tokens / elapsed
        return Reply(text=text, usage=usage, cost=self._cost(litellm, response, usage), raw=response, tool_call=call)

    def _stream(self, litellm, messages, max_tokens, on_token, started, temperature=None, tools=None):
        pieces: list[str] = []
        # The first tool call's name and arguments, as their pieces arrive.
        first: int | None = None
        others: set[int] = set()  # the index of every call the stream names
        name: list[str] = []
        arguments: list[str] = []
        usage = Usage()
        first_token = None
        request = self._request(messages, max_tokens, stream=True, temperature=temperature, tools=tools)
        stream = litellm.completion(**request)
        last = None
        for chunk in stream:
            last = chunk
            if getattr(chunk, "usage", None):
                usage = _usage(chunk.usage)
            if not chunk.choices:
                continue
            for delta in getattr(chunk.choices[0].delta, "tool_calls", None) or []:
                # The first call the stream names; its name once (a provider may repeat it in each piece).
                index = delta.index or 0
                first = index if first is None else first
                others.add(index)
                if index == first and delta.function is not None:
                    name[:] = name or ([delta.function.name] if delta.function.name else [])
                    arguments.append(delta.function.arguments or "")
            piece = chunk.choices[0].delta.content or ""
            if not piece:
                continue
            if first_token is None:
                first_token = time.monotonic() - started
            pieces.append(piece)
            if on_token(piece):
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
                break
        call = _tool_call("".join(name), "".join(arguments), len(others) - 1) if name else None
        return "".join(pieces), call, usage, first_token, last

    def _cost(self, litellm, response, usage: Usage) -> float:
        """Dollars for this call; 0 for models LiteLLM has no price for (local servers)."""
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=self.name, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
            return float(prompt_cost + completion_cost)
        except Exception:
            return 0.0


def _tool_call(name: str, arguments: str, more: int = 0) -> ToolCall:
    """A called tool (`more`: calls after it in the same reply); its arguments None where they are not a
    JSON object."""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        parsed = None
    return ToolCall(name, parsed if isinstance(parsed, dict) else None, arguments, more)


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
    )


def _retry_after(error: Exception) -> float | None:
    headers = getattr(error, "headers", None) or getattr(getattr(error, "response", None), "headers", None)
    if not headers:
        headers = getattr(error, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        return parse_retry_after(headers.get("retry-after") or headers.get("Retry-After"))
    except AttributeError:
        return None


def _translate(litellm, error: Exception) -> Exception:
    """Map LiteLLM's exceptions onto ours: retryable, context overflow, or unavailable."""
    exc = litellm.exceptions
    message = _short(error)
    if isinstance(error, exc.ContextWindowExceededError):
        return ContextLengthExceeded(message)
    if isinstance(error, exc.RateLimitError):
        return Retryable(f"rate limited (429): {message}", _retry_after(error))
    if isinstance(error, exc.Timeout | exc.APIConnectionError):
        return Retryable(f"connection failed: {message}", None)
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return Retryable(f"server error ({status}): {message}", _retry_after(error))
    if isinstance(error, exc.AuthenticationError):
        return ModelUnavailable(f"authentication failed: {message}")
    if isinstance(error, exc.BadRequestError) and "context" in message.lower() and "length" in message.lower():
        return ContextLengthExceeded(message)
    if isinstance(error, exc.BadRequestError | exc.UnprocessableEntityError):
        return RequestRejected(f"request rejected: {message}")
    return ModelUnavailable(message)


def _short(error: Exception) -> str:
    text = str(getattr(error, "message", None) or error).strip()
    text = re.sub(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)\s*[:\-]\s*)+", "", text)
    return text.splitlines()[0][:300] if text else type(error).__name__


# Provider keys in the order agentcli prefers them when no model is configured.
PROVIDER_DEFAULTS = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"),
)


def _provider_key() -> str | None:
    return next((key for key, _ in PROVIDER_DEFAULTS if os.environ.get(key)), None)


def default_hosted_model() -> str | None:
    """The model to use when none is configured but a provider key is in the environment."""
    return next((model for key, model in PROVIDER_DEFAULTS if os.environ.get(key)), None)


def missing_api_keys(model: str) -> list[str]:
    """Environment variables the provider needs that are not set (empty: ready to go)."""
    litellm = _litellm()
    try:
        check = litellm.validate_environment(model=model)
    except Exception:
        return []
    return [] if check.get("keys_in_environment") else list(check.get("missing_keys") or [])
