"""A run's journal read back as the trajectory that stands: every prompt the model saw, rebuilt from
the journal alone (its `model_prompt` events), and, where the run was resumed, without what the
earlier go did from the step it went on from."""

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


def standing(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of the trajectory that stands: where a run was resumed from step k, what the earlier
    go did from step k on is dropped, as the resumed run did it again."""
    kept: list[dict[str, Any]] = []
    starts: dict[int, int] = {}
    for event in events:
        kind = event.get("type")
        if kind == "run_resumed":
            cut = starts.get(int(event.get("step", 0)), len(kept))
            kept = kept[:cut]
            starts = {step: i for step, i in starts.items() if i < cut}
            continue
        if kind == "step_started":
            starts[int(event["step"])] = len(kept)
        kept.append(event)
    return kept
