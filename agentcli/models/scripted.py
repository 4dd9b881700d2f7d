"""A model that replies from a script: deterministic runs for tests, demos and replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.models.base import (
    Message,
    ModelError,
    ModelGaveUp,
    Reply,
    StreamCallback,
    ToolCall,
    Usage,
    estimate_message_tokens,
    estimate_tokens,
)


class ScriptedModel:
    """Returns the given replies in order, one per call; when they run out the model gives up.

    A reply is text, or a tool call `{"tool": NAME, "arguments": {...}, "text": "..."}` for a model
    offered tools (`calls_tools`)."""

    def __init__(
        self,
        replies: list[str | dict[str, Any]],
        *,
        name: str = "scripted",
        context_window: int = 131072,
        continues_replies: bool = False,
        constrains_replies: bool = False,
        calls_tools: bool = False,
    ):
        """`continues_replies`: a reply that does not start with the prefix asked for is returned after
        it, as a model that continues the prefix writes only the rest. `constrains_replies`: the model
        says it decodes under a grammar (the replies are returned as written; `grammars` records what
        each call asked for)."""
        self.replies = list(replies)
        self.name = name
        self._window = context_window
        self.continues_replies = continues_replies
        self.constrains_replies = constrains_replies
        self.calls_tools = calls_tools
        self.grammars: list[str | None] = []  # the grammar of each call
        self.calls: list[list[Message]] = []
        self.prefixes: list[str] = []  # the prefix of each call
        self._used = 0  # replies an earlier process used (a resumed run)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise UsageError(f"scripted replies file not found: {path}") from None
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"cannot read scripted replies file {path}: {e}") from None
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
        # {"replies": [...], "continues_replies": true}: replies that go on from a start agentcli
        # begins them with, as a model run by llama.cpp does.
        continues = isinstance(data, dict) and data.get("continues_replies") is True
        calls_tools = isinstance(data, dict) and data.get("calls_tools") is True
        replies = data.get("replies") if isinstance(data, dict) else data
        if not isinstance(replies, list) or not all(isinstance(r, str) or _is_call(r) for r in replies):
            raise UsageError(
                f'{path}: must be a JSON list of replies (strings, or {{"tool": ..., "arguments": {{...}}}}), '
                'or {"replies": [...]}'
            )
        return cls(replies, name=f"scripted:{path}", continues_replies=continues, calls_tools=calls_tools)

    def skip(self, used: int) -> None:
        """Go on after the first `used` replies, which an earlier run of this script used."""
        self._used = used

    @property
    def context_window(self) -> int:
        return self._window

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_message_tokens(messages)

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
        self.calls.append(list(messages))
        self.prefixes.append(prefix)
        self.grammars.append(grammar)
        index = self._used + len(self.calls) - 1
        if index >= len(self.replies):
            raise ModelGaveUp("the scripted replies ran out")
        entry = self.replies[index]
        if isinstance(entry, dict):
            if not (tools and self.calls_tools):
                raise ModelError("a scripted tool call, but the call offered no tools")
            arguments = entry.get("arguments")
            call = ToolCall(str(entry["tool"]), arguments, json.dumps(arguments))
            text = str(entry.get("text", ""))
            if on_token is not None and text:
                on_token(text)
            usage = Usage(prompt_tokens=self.count_tokens(messages), completion_tokens=estimate_tokens(call.raw))
            return Reply(text=text, usage=usage, tool_call=call)
        text = entry
        if self.continues_replies and not text.startswith(prefix):
            text = prefix + text
        if on_token is not None:
            on_token(text)
        usage = Usage(prompt_tokens=self.count_tokens(messages), completion_tokens=estimate_tokens(text))
        return Reply(text=text, usage=usage)


def _is_call(entry: object) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("tool"), str) and isinstance(entry.get("arguments"), dict)
