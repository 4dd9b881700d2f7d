"""The conversation the model sees: pinned system prompt and task, then the steps so far.

The history only grows at its end between compactions, so prompt caches keep hitting.
"""

from __future__ import annotations

from typing import Protocol

from agentcli.models.base import Message


class Context(Protocol):
    """What the loop needs from a context manager."""

    def start(self, system: str, task: str) -> None: ...

    def add(self, role: str, content: str) -> None: ...

    def set_plan(self, steps: list[str]) -> None: ...

    def prompt(self) -> list[Message]:
        """The messages for the next model call, within budget."""
        ...


class FullHistory:
    """Keeps every message: right for short runs and for models with room to spare."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.plan: list[str] = []

    def start(self, system: str, task: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]

    def add(self, role: str, content: str) -> None:
        self.messages.append({"role": role, "content": content})

    def set_plan(self, steps: list[str]) -> None:
        self.plan = list(steps)

    def prompt(self) -> list[Message]:
        return list(self.messages)
