"""Folding old steps into a running summary with a model (the main one or a light local one)."""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.agent.prompts import render
from agentcli.context.tokens import TokenCounter, model_window
from agentcli.models.base import Message, Model

# Room kept in the summary model's own window for the instructions around the steps.
_INSTRUCTION_ROOM = 512
_MIN_MESSAGE_CHARS = 160


class SummaryUnavailable(Exception):
    """No usable summary: the model failed, wrote nothing, or wrote more than it was allowed."""


@dataclass
class SummaryRequest:
    task: str
    plan: list[str]
    previous: str  # the notes so far; "" before the first compaction
    steps: list[Message]  # the messages being folded
    first_step: int  # the number of the first folded step
    limit_tokens: int  # the most the new notes may take


class ModelSummarizer:
    """Asks a model for updated notes; raises on any failure so the caller can fall back."""

    def __init__(self, model: Model, *, window: int = 0):
        self.model = model
        self.counter = TokenCounter.for_model(model)
        self.window = model_window(model, window)

    def __call__(self, request: SummaryRequest) -> str:
        budget = self.window - request.limit_tokens - _INSTRUCTION_ROOM
        messages = self._messages(request, budget)
        reply = self.model.complete(messages, max_tokens=request.limit_tokens + request.limit_tokens // 4)
        text = reply.text.strip()
        if not text:
            raise SummaryUnavailable("the summary model returned nothing")
        if self.counter.text(text) > request.limit_tokens:
            raise SummaryUnavailable(f"the summary took more than {request.limit_tokens} tokens")
        return text

    def _messages(self, request: SummaryRequest, budget: int) -> list[Message]:
        """The summary prompt, with each folded message cut so the whole fits `budget` tokens."""
        per_message = 2400
        while True:
            prompt = render(
                "summary",
                task=cut_middle(request.task, 3000),
                plan="\n".join(f"{i}. {s}" for i, s in enumerate(request.plan, 1)) or "(none written)",
                previous=request.previous or "(none yet)",
                steps=render_steps(request.steps, request.first_step, per_message),
                words=str(max(20, request.limit_tokens * 3 // 5)),
            )
            messages: list[Message] = [{"role": "user", "content": prompt}]
            if per_message <= _MIN_MESSAGE_CHARS or self.counter.messages(messages) <= budget:
                return messages
            per_message //= 2


def render_steps(messages: list[Message], first_step: int, per_message: int) -> str:
    """Folded messages as plain text for the summary model, each cut to `per_message` characters."""
    parts: list[str] = []
    step = first_step - 1
    for message in messages:
        if message["role"] == "assistant":
            step += 1
            parts.append(f"--- step {step}: the agent wrote\n{cut_middle(message['content'], per_message)}")
        else:
            parts.append(f"--- then it saw\n{cut_middle(message['content'], per_message)}")
    return "\n".join(parts)


def cut_middle(text: str, limit: int, note: str = "characters cut") -> str:
    """`text` if it has at most `limit` characters, else its head and tail with a marker between."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted:,} {note} ...]\n{text[len(text) - tail :]}"
