"""The conversation the model sees: pinned system prompt and task, notes on older steps, recent steps.

The prompt only grows at its end between compactions, so the KV cache of a local model and the
prompt cache of a hosted API keep hitting. When the next prompt would pass the high-water mark,
the oldest verbatim steps, at least half of them, are folded at once into the notes, which sit at
the end of the pinned task message; the prompt then starts again from below the low-water mark.
The notes are the current plan, the facts a summary model found in folded steps (merged with
those kept before, the least relevant dropped first when room runs out), and a deterministic
digest of commands, exit codes, files written and open errors. Compaction never fails: if the
summary model errors or writes too much, the digest is updated alone.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol

from agentcli.context.digest import Digest, ReplyReader, no_command
from agentcli.context.summary import (
    ModelSummarizer,
    SummaryRequest,
    SummaryUnavailable,
    cut_middle,
    merge_facts,
    parse_facts,
)
from agentcli.context.tokens import TokenCounter, model_window
from agentcli.errors import UsageError
from agentcli.events import ContextCompacted, Event
from agentcli.models.base import Message, Model
from agentcli.prompts import render

if TYPE_CHECKING:
    from agentcli.config import Settings

Summarizer = Callable[[SummaryRequest], str]

# `summary_model = "digest"`: no summary model, the deterministic digest only.
DIGEST = "digest"
# The fewest tokens the steps must have beside the pinned part for a session to run at all.
MIN_STEP_ROOM = 256
# Characters per token assumed when a token budget becomes a character limit (code runs ~3-4).
CHARS_PER_TOKEN = 3
_MIN_OBSERVATION_CHARS = 400
# Seconds the run must have left for a fold to ask the summary model (at least twice what the last ask
# took): on two cores a summary of folded steps takes most of a minute, which a run near its wall clock
# does not have. With less, the fold updates the digest alone, as when the summary model fails.
MIN_SUMMARY_SECONDS = 60.0
# How a task message starts (agentcli/prompts/task.md).
_TASK_PREFIX = "Task: "


class Context(Protocol):
    """What the loop needs from a context manager."""

    def start(self, system: str, task: str) -> None: ...

    def add(self, role: str, content: str) -> None: ...

    def set_plan(self, steps: list[str]) -> None: ...

    def prompt(self) -> list[Message]:
        """The messages for the next model call, within budget."""
        ...

    def shrink(self, error: str = "") -> bool:
        """The provider said (in `error`) the prompt was too long: make it shorter. False when it cannot."""
        ...


class ContextWindow:
    """Pinned system prompt and task, a running summary of older steps, recent steps verbatim.

    `window` is the token budget of one call (prompt and reply); `reply_tokens` of it are kept for
    the reply. Marks are fractions of the room the pinned part leaves: the prompt may grow to
    `high_water`, and a compaction brings it back to at most `low_water`.
    """

    def __init__(
        self,
        model: Model,
        *,
        window: int = 0,
        reply_tokens: int = 1024,
        summarizer: Summarizer | None = None,
        on_event: Callable[[Event], None] | None = None,
        high_water: float = 0.85,
        low_water: float = 0.25,
        min_fold: float = 0.5,
        counter: TokenCounter | None = None,
        read_reply: ReplyReader = no_command,
    ):
        if not 0 < low_water < high_water <= 1:
            raise ValueError("need 0 < low_water < high_water <= 1")
        self.counter = counter or TokenCounter.for_model(model)
        self.window = window if window > 0 else model_window(model)
        self.reply_tokens = reply_tokens
        self.summarize = summarizer if summarizer is not None else default_summarizer(model, self.window)
        self.on_event = on_event or (lambda event: None)
        self.high_water, self.low_water, self.min_fold = high_water, low_water, min_fold
        self.scale = 1.0  # lowered each time a provider rejects a prompt as too long
        self.compactions = 0
        self.fallbacks = 0
        self.strict = False  # True: a task too big for the window is an error, not cut
        self.read_reply = read_reply  # the agent sets its reply protocol's reader
        self.time_left: Callable[[], float | None] = lambda: None  # the run's seconds left (None: no limit)
        self.summary_seconds = 0.0  # what the last ask of the summary model took
        self._reset("", "")

    def _reset(self, system: str, task: str) -> None:
        self.system: Message = {"role": "system", "content": system}
        self.task: Message = {"role": "user", "content": task}
        self.summary = ""  # the block after the task: header, plan, facts, digest
        self.facts: list[str] = []
        self.requests: list[str] = []  # follow-up task messages that were folded
        self.plan: list[str] = []
        self.recent: list[Message] = []
        self.digest = Digest()
        self.folded_steps = 0
        self._task_message: Message = self.task

    # -- budget -----------------------------------------------------------------------------------

    @property
    def available(self) -> int:
        """Tokens the prompt may take: the window less the reply's share."""
        return max(1, int(self.window * self.scale) - self.reply_tokens)

    @property
    def pinned_tokens(self) -> int:
        return self.counter.messages([self.system, self.task])

    @property
    def room(self) -> int:
        """Tokens the pinned part leaves for the summary and the steps."""
        return max(1, self.available - self.pinned_tokens)

    @property
    def summary_limit(self) -> int:
        return min(800, max(48, self.room // 6))

    @property
    def message_limit(self) -> int:
        """The most one step's message may take; longer ones are cut to head and tail."""
        return max(32, self.room // 3)

    def marks(self) -> tuple[int, int]:
        """(high, low) water marks in prompt tokens."""
        pinned, room = self.pinned_tokens, self.room
        return pinned + int(room * self.high_water), pinned + int(room * self.low_water)

    def observation_chars(self, configured: int) -> int:
        """The per-observation limit in characters: the configured one, at most a quarter of the window."""
        share = max(_MIN_OBSERVATION_CHARS, self.available // 4 * CHARS_PER_TOKEN)
        return min(configured, share) if configured > 0 else share

    def check_task(self, task: str, workdir: str) -> None:
        """For a strict window (a budget the user set): fail at once if `task` leaves no room for steps."""
        if self.strict:
            self.check_pinned(render("system", workdir=workdir), render("task", task=task.strip(), context=""))

    def check_pinned(self, system: str, task: str) -> None:
        """Fail with a usage error when the pinned part leaves no room for steps (a budget set too small)."""
        pinned = self.counter.messages([{"role": "system", "content": system}, {"role": "user", "content": task}])
        needed = pinned + self.reply_tokens + MIN_STEP_ROOM
        if self.window < needed:
            raise UsageError(
                f"context budget of {self.window} tokens is too small: the system prompt and task take {pinned}, "
                f"the reply {self.reply_tokens} and the steps at least {MIN_STEP_ROOM}; "
                f"use --context-budget {needed} or more"
            )

    # -- the Context protocol -------------------------------------------------------------------

    def start(self, system: str, task: str) -> None:
        self._reset(system, task)
        self._fit_pinned()

    def add(self, role: str, content: str) -> None:
        message: Message = {"role": role, "content": content}
        limit = self.message_limit
        if self.counter.message(message) > limit:
            message = {"role": role, "content": self._cut_to(content, limit)}
        self.recent.append(message)

    def set_plan(self, steps: list[str]) -> None:
        # The revision is in the history as the model wrote it; re-pinned only at compaction.
        self.plan = list(steps)

    def prompt(self) -> list[Message]:
        high, low = self.marks()
        if self.tokens() > high:
            self._compact(self._fold_point(low))
        self._enforce_limit()
        return self.messages()

    def shrink(self, error: str = "") -> bool:
        if self.scale < 0.2:
            return False
        limit = provider_limit(error)
        if limit is not None and limit < self.window * self.scale:
            # The provider's own tokenizer may count more than ours: keep a margin below its limit.
            self.scale = max(0.1, limit * 0.9 / self.window)
        else:
            self.scale *= 0.75
        self._fit_pinned()
        self._compact(self._fold_point(self.marks()[1]))
        self._enforce_limit()
        return True

    # -- state ----------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """What the window holds besides its recent messages, as JSON: journaled at each compaction so
        `restore` can rebuild the window a resumed run goes on with."""
        return {
            "system": self.system["content"],
            "task": self.task["content"],
            "summary": self.summary,
            "facts": self.facts,
            "requests": self.requests,
            "plan": self.plan,
            "folded_steps": self.folded_steps,
            "digest": asdict(self.digest),
            "scale": self.scale,
            "compactions": self.compactions,
            "fallbacks": self.fallbacks,
        }

    def restore(self, prompt: list[Message], state: dict[str, Any] | None, plan: list[str]) -> None:
        """Become the window that sent `prompt`: its pinned part from `state` (the last one journaled,
        None before any compaction), its recent messages from the prompt. The next prompt then begins
        exactly as `prompt` did."""
        if len(prompt) < 2:
            raise ValueError("a prompt holds at least the system prompt and the task")
        if state is None:
            self._reset(prompt[0]["content"], prompt[1]["content"])
        else:
            self._reset(state["system"], state["task"])
            self.facts, self.requests = list(state["facts"]), list(state["requests"])
            self.folded_steps = int(state["folded_steps"])
            self.digest = Digest.from_dict(state["digest"])
            self.scale = float(state["scale"])
            self.compactions, self.fallbacks = int(state["compactions"]), int(state["fallbacks"])
            self._set_summary(state["summary"])
        self.plan = list(plan)
        self.system = dict(prompt[0])  # as sent, should a later cut have changed them
        self._task_message = dict(prompt[1])
        self.recent = [dict(m) for m in prompt[2:]]

    def messages(self) -> list[Message]:
        return [self.system, self._task_message, *self.recent]

    def tokens(self) -> int:
        return self.counter.messages(self.messages())

    def _fit_pinned(self) -> None:
        """Cut the task (then, if need be, the system prompt) so the steps keep some room."""
        before = self.tokens()
        target = self.available - min(MIN_STEP_ROOM, self.available // 2)
        system_tokens = self.counter.messages([self.system])
        if self.pinned_tokens > target:
            keep = max(64, target - system_tokens)
            self.task = {"role": "user", "content": self._cut_to(self.task["content"], keep, "task")}
        if self.pinned_tokens > target:
            keep = max(64, target - self.counter.messages([self.task]))
            self.system = {
                "role": "system",
                "content": self._cut_to(self.system["content"], keep, "system"),
            }
        self._set_summary(self.summary)
        if self.tokens() < before:
            self._compacted(0, before, fallback=False)

    def _compacted(self, folded: int, before: int, *, fallback: bool) -> None:
        """Say the window shrank, with its state after (a resumed run rebuilds the window from it)."""
        self.on_event(
            ContextCompacted(
                folded_messages=folded,
                tokens_before=before,
                tokens_after=self.tokens(),
                fallback=fallback,
                state=self.state(),
            )
        )

    def _set_summary(self, block: str) -> None:
        self.summary = block
        content = self.task["content"] + ("\n\n" + block if block else "")
        self._task_message = {"role": "user", "content": content}

    # -- compaction -----------------------------------------------------------------------------

    def _fold_point(self, target: int) -> int:
        """How many of the oldest recent messages to fold: at least `min_fold` of them, ending
        before an assistant message, and enough to bring the prompt under `target` if possible.
        The last step stays verbatim."""
        n = len(self.recent)
        cuts = [i for i in range(1, n) if self.recent[i]["role"] == "assistant"]
        if not cuts:
            return 0
        base = self.pinned_tokens + self.summary_limit
        least = math.ceil(n * self.min_fold)
        candidates = [i for i in cuts if i >= least] or [cuts[-1]]
        for i in candidates:
            if base + sum(self.counter.message(m) for m in self.recent[i:]) <= target:
                return i
        return candidates[-1]

    def _compact(self, count: int) -> None:
        """Fold the `count` oldest recent messages into the summary."""
        if count <= 0:
            return
        before = self.tokens()
        folded, self.recent = self.recent[:count], self.recent[count:]
        first = self.folded_steps + 1
        self.folded_steps += self.digest.add(folded, first, self.read_reply)
        # Follow-up tasks (a REPL session) stay in view: they are as binding as the first one.
        self.requests += [m["content"] for m in folded if m["role"] == "user" and m["content"].startswith(_TASK_PREFIX)]
        fallback = self._update_notes(folded, first)
        self.compactions += 1
        self.fallbacks += fallback
        self._compacted(count, before, fallback=fallback)

    def _summary_block(self, facts: list[str], digest: str) -> str:
        requests = [cut_middle(r.removeprefix(_TASK_PREFIX).strip(), 600) for r in self.requests[-3:]]
        return render(
            "context/folded_notes",
            folded=self.folded_steps,
            requests=requests,
            plan=self.plan,
            facts=facts,
            digest=digest,
        )

    def _update_notes(self, folded: list[Message], first: int) -> bool:
        """Fold `folded` into the notes; True when the summary model failed and only the digest was updated.

        The block is the plan, the facts (the summary model's, merged with those kept before) and
        the digest; facts get at most half the block's tokens, the digest what is left.
        """
        limit = self.summary_limit
        frame = self.counter.text(self._summary_block([], ""))
        facts_limit = max(16, (limit - frame) // 2)
        request = SummaryRequest(
            task=self.task["content"],
            plan=self.plan,
            previous=self.facts,
            steps=folded,
            first_step=first,
            limit_tokens=facts_limit,
            read_reply=self.read_reply,
        )
        started = time.monotonic()
        try:
            left = self.time_left()
            if left is not None and left < max(MIN_SUMMARY_SECONDS, 2 * self.summary_seconds):
                raise SummaryUnavailable("no time left for the summary model")
            new = parse_facts(self.summarize(request), request.max_lines)
            self.summary_seconds = time.monotonic() - started
            if self.counter.text("\n".join(f"- {f}" for f in new)) > facts_limit:
                raise SummaryUnavailable("the summary is too long")
            fallback = False
        except Exception:  # whatever went wrong with the summary model, compaction goes on
            new, fallback = [], True
        relevant = self.task["content"] + "\n" + "\n".join(self.plan)
        self.facts = merge_facts(
            self.facts,
            new,
            relevant,
            lambda facts: self.counter.text("\n".join(f"- {f}" for f in facts)) <= facts_limit,
        )
        used = self.counter.text(self._summary_block(self.facts, ""))
        digest = self.digest.render(lambda text: self.counter.text(text) <= max(16, limit - used))
        block = self._summary_block(self.facts, digest)
        if self.counter.text(block) > limit:
            block = self._cut_to(block, limit)
        self._set_summary(block)
        return fallback

    def _enforce_limit(self) -> None:
        """The last line of defence: the prompt fits `available`, whatever it takes."""
        for _ in range(12):
            over = self.tokens() - self.available
            if over <= 0:
                return
            last = max((i for i, m in enumerate(self.recent) if m["role"] == "assistant"), default=0)
            if last > 0:
                self._compact(last)  # everything but the last step
                continue
            before = self.tokens()
            sizes = [self.counter.message(m) for m in self.recent]
            if sizes and max(sizes) > 48:
                i = sizes.index(max(sizes))
                keep = max(32, sizes[i] - over - 16)
                self.recent[i] = {
                    "role": self.recent[i]["role"],
                    "content": self._cut_to(self.recent[i]["content"], keep),
                }
            elif self.recent:
                self._compact(len(self.recent))
                continue
            elif self.summary:
                self._set_summary(self._cut_to(self.summary, max(16, self.counter.text(self.summary) - over - 16)))
            else:
                self._fit_pinned()
            self._compacted(0, before, fallback=True)

    def _cut_to(self, text: str, tokens: int, part: str | None = None) -> str:
        """Head and tail of `text` within about `tokens` tokens, with a note of what was cut (`part`: the
        task or the system prompt, for the note)."""
        note = render("context/cut_note", part=part, to_fit=True)
        if tokens <= 0:
            return render("context/cut", whole=True, count=len(text), note=note)
        limit = len(text)
        for _ in range(6):
            current = self.counter.text(text)
            if current <= tokens:
                return text
            limit = max(16, int(limit * tokens / max(1, current) * 0.9))
            cut = cut_middle(text, limit, note)
            if self.counter.text(cut) <= tokens or limit <= 16:
                return cut
        return cut_middle(text, 16, note)


_LIMIT_PATTERNS = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"(\d[\d,]*)[- ]token context", re.IGNORECASE),
    re.compile(r"context (?:window|length|limit)(?: of| is)? (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"tokens? > (\d[\d,]*) maximum", re.IGNORECASE),
)


def provider_limit(error: str) -> int | None:
    """The context length a provider's error message states, if it states one."""
    for pattern in _LIMIT_PATTERNS:
        match = pattern.search(error)
        if match:
            return int(match.group(1).replace(",", ""))
    return None


def digest_only(request: SummaryRequest) -> str:
    """A summarizer that always defers to the deterministic digest."""
    raise SummaryUnavailable("no summary model: the digest stands in")


def default_summarizer(model: Model, window: int = 0) -> Summarizer:
    """Summaries by the main model, unless it is scripted: its replies are the agent's turns, not summaries."""
    from agentcli.models.scripted import ScriptedModel

    if isinstance(model, ScriptedModel):
        return digest_only
    return ModelSummarizer(model, window=window)


def build_context(
    model: Model,
    *,
    budget: int = 0,
    reply_tokens: int = 1024,
    summary_model: Model | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> ContextWindow:
    """The window for a run: the model's context capped by `budget`, summaries by `summary_model`."""
    window = model_window(model, budget)
    summarizer = ModelSummarizer(summary_model, window=window) if summary_model else default_summarizer(model, window)
    return ContextWindow(model, window=window, reply_tokens=reply_tokens, summarizer=summarizer, on_event=on_event)


def context_for_run(
    model: Model,
    settings: Settings,
    *,
    on_event: Callable[[Event], None] | None = None,
    notify: Callable[[str], None] = lambda message: None,
) -> ContextWindow:
    """The window for a session: budget, reply share and summary model from the settings.

    `summary_model` names the summary role's model: empty for the main model, `digest` for no
    model at all. A `context_budget` below the model's own window makes the window strict:
    `check_task` then rejects a task that leaves no room for steps, instead of cutting it.
    """
    from agentcli.models.resolve import create_model

    choice = settings.summary_model.strip()
    summary_model = create_model(choice, settings, notify=notify) if choice and choice != DIGEST else None
    context = build_context(
        model,
        budget=settings.context_budget,
        reply_tokens=settings.reply_tokens,
        summary_model=summary_model,
        on_event=on_event,
    )
    if choice == DIGEST:
        context.summarize = digest_only
    context.strict = 0 < settings.context_budget <= model_window(model)
    return context
