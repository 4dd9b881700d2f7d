"""Every prompt a run's model saw, rebuilt from its journal alone (its `model_prompt` events)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentcli.models.base import Message


@dataclass
class Prompt:
    step: int
    messages: list[Message]
    prefix: str = ""
    temperature: float | None = None


def prompts(events: Iterable[dict[str, Any]]) -> list[Prompt]:
    """The prompts in the order they were sent; each `model_prompt` keeps the first `keep` messages of
    the one before and adds its own."""
    rebuilt: list[Prompt] = []
    last: list[Message] = []
    for event in events:
        if event.get("type") != "model_prompt":
            continue
        keep = int(event.get("keep", 0))
        if keep > len(last):
            raise ValueError(f"step {event.get('step')}: keeps {keep} messages of a prompt that had {len(last)}")
        last = [*last[:keep], *(dict(m) for m in event.get("messages", []))]
        rebuilt.append(Prompt(int(event.get("step", 0)), list(last), event.get("prefix", ""), event.get("temperature")))
    return rebuilt
