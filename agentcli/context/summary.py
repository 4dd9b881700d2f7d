"""Facts from folded steps, extracted by a model (the main one or a light local one).

The model is asked only for what needs reading: the facts in the folded steps that the task may
depend on. The commands, exit codes, files written and open errors come from the deterministic
digest, and facts already kept are merged here, not rewritten by the model, so a small model
cannot lose them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcli.context.digest import ReplyReader, no_command
from agentcli.context.tokens import TokenCounter, model_window
from agentcli.models.base import Message, Model
from agentcli.prompts import render

# Room kept in the summary model's own window for the instructions around the steps.
_INSTRUCTION_ROOM = 512
_MIN_MESSAGE_CHARS = 160
MAX_FACT_CHARS = 200
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_WORD = re.compile(r"[a-z0-9_]{4,}")
_NOTHING = re.compile(r"^(?:nothing new|none|n/a|no new facts?)\.?$", re.IGNORECASE)


class SummaryUnavailable(Exception):
    """No usable summary: the model failed, wrote nothing, or wrote more than it was allowed."""


@dataclass
class SummaryRequest:
    task: str
    plan: list[str]
    previous: list[str]  # facts kept so far
    steps: list[Message]  # the messages being folded
    first_step: int  # the number of the first folded step
    limit_tokens: int  # the most the new facts may take
    max_lines: int = 8
    read_reply: ReplyReader = no_command  # each folded reply's command, shown in its place


class ModelSummarizer:
    """Asks a model for the new facts in folded steps; raises on any failure so the caller falls back."""

    def __init__(self, model: Model, *, window: int = 0):
        self.model = model
        self.counter = TokenCounter.for_model(model)
        self.window = model_window(model, window)

    def __call__(self, request: SummaryRequest) -> str:
        budget = self.window - request.limit_tokens - _INSTRUCTION_ROOM
        messages = self._messages(request, budget)
        lines = [0]

        def enough(piece: str) -> bool:
            # Small models run on down a list; stop once the lines asked for are written.
            lines[0] += piece.count("\n")
            return lines[0] > request.max_lines

        reply = self.model.complete(
            messages, max_tokens=request.limit_tokens + request.limit_tokens // 2, on_token=enough
        )
        if not reply.text.strip():
            raise SummaryUnavailable("the summary model returned nothing")
        return reply.text

    def _messages(self, request: SummaryRequest, budget: int) -> list[Message]:
        """The prompt, with each folded message cut so the whole fits `budget` tokens."""
        per_message = 600
        while True:
            prompt = render(
                "summary",
                task=cut_middle(request.task, 2000),
                plan=request.plan,
                previous=request.previous,
                steps=render_steps(request.steps, request.first_step, per_message, request.read_reply),
                lines=str(request.max_lines),
            )
            messages: list[Message] = [{"role": "user", "content": prompt}]
            if per_message <= _MIN_MESSAGE_CHARS or self.counter.messages(messages) <= budget:
                return messages
            per_message //= 2


def render_steps(
    messages: list[Message], first_step: int, per_message: int, read_reply: ReplyReader = no_command
) -> str:
    """Folded messages as a compact log: each step's command (or reply) and what it printed."""
    parts: list[str] = []
    step = first_step - 1
    for message in messages:
        text = message["content"]
        if message["role"] == "assistant":
            step += 1
            command, _ = read_reply(text)
            shown = f"$ {command}" if command else text
            parts.append(f"[step {step}]\n{cut_middle(shown, per_message)}")
        else:
            parts.append(cut_middle(text, per_message))
    return "\n".join(parts)


def parse_facts(text: str, max_lines: int) -> list[str]:
    """Fact lines from a model's reply: bullets stripped, headings and "nothing new" dropped."""
    facts: list[str] = []
    for raw in text.strip().splitlines():
        line = _BULLET.sub("", raw).strip().strip("*").strip()
        line = re.sub(r"^facts?\s*:\s*", "", line, flags=re.IGNORECASE)
        if not line or line.endswith(":") or _NOTHING.match(line) or line.startswith(("```", "<")):
            continue
        facts.append(line if len(line) <= MAX_FACT_CHARS else line[: MAX_FACT_CHARS - 1] + "…")
        if len(facts) == max_lines:
            break
    return facts


def merge_facts(kept: list[str], new: list[str], relevant: str, fits) -> list[str]:
    """`kept` then the `new` facts not already there; while they do not fit, the fact sharing the
    fewest words with `relevant` (the task and plan) goes, the oldest first among equals."""
    seen = {fact.lower() for fact in kept}
    facts = list(kept) + [f for f in new if f.lower() not in seen and not seen.add(f.lower())]
    words = set(_WORD.findall(relevant.lower()))
    while facts and not fits(facts):
        scores = [len(words & set(_WORD.findall(fact.lower()))) for fact in facts]
        facts.pop(scores.index(min(scores)))
    return facts


def cut_middle(text: str, limit: int, note: str | None = None) -> str:
    """`text` if it has at most `limit` characters, else its head and tail with a marker between that
    says how much was cut (`note`: what the marker says of it; by default, only that it was cut)."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    if note is None:
        note = render("context/cut_note", part=None, to_fit=False)
    marker = render("context/cut", whole=False, count=omitted, note=note)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"
