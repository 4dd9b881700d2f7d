"""One call of the model: the prompt journaled, the reply streamed and cut once it holds its action,
its tokens counted, and read into the action it asks for. Also whether a reply only echoes agentcli's lines."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentcli.agent.outcome import Stop
from agentcli.agent.parsing import (
    ParsedReply,
    action_complete,
    echoes_own_lines,
    parse_reply,
    repeating,
)
from agentcli.agent.reply_grammar import reply_grammar
from agentcli.agent.run_context import RunContext
from agentcli.agent.tools import ACTION_TOOLS, call_text, parsed_call
from agentcli.events import ModelPrompt, TokenStreamed
from agentcli.models.base import ContextLengthExceeded, Message, Reply

# Times a prompt the provider rejected as too long is compacted harder and sent again.
CONTEXT_RETRIES = 3
# Characters of reply without any code fence after which generation stops (see ModelCalls.watcher).
PROSE_LIMIT = 1500
# Characters streamed within one line after which the reply is looked at all the same.
LOOK_EVERY = 200
# Where prose may be cut back to: a line's end, or a sentence's (not a list item's number: "2.").
_CUT_POINT = re.compile(r"(?<=[^\d\s][.!?])(?:[ \t]|$)|\n")


class ModelCalls:
    def __init__(self, run: RunContext):
        self.run = run

    def complete(self, temperature: float | None = None) -> Reply:
        """Call the model; a context-length error makes the context compact harder, then retry."""
        run = self.run
        for attempt in range(CONTEXT_RETRIES + 1):
            try:
                prompt = run.context.prompt()
                self._journal_prompt(prompt, temperature)
                grammar = self._grammar_for_call()
                shape: dict[str, Any] = {"grammar": grammar} if grammar is not None else {}
                if getattr(run.model, "calls_tools", False):
                    shape["tools"] = ACTION_TOOLS
                return run.model.complete(
                    prompt,
                    max_tokens=run.limits.reply_tokens,
                    on_token=self._watcher(),
                    temperature=run.temperature if temperature is None else temperature,
                    prefix=run.state.reply_start,
                    **shape,
                )
            except ContextLengthExceeded as e:
                if attempt == CONTEXT_RETRIES or not run.context.shrink(str(e)):
                    raise Stop("failed", f"the prompt does not fit the model's context window: {e}") from None
        raise AssertionError("unreachable")

    def read(self, reply: Reply, text: str) -> ParsedReply:
        """The action a reply asks for, its code with no file placed (see agent.placing)."""
        if reply.tool_call is not None:
            parsed = parsed_call(reply.tool_call, text)
        else:  # a reply decoded under the grammar is well formed: its last line is its action
            parsed = parse_reply(text, strict=self.grammar() is not None)
        self.run.placer.place(parsed)
        return parsed

    def account(self, reply: Reply) -> None:
        outcome = self.run.outcome
        outcome.tokens_in += reply.usage.prompt_tokens
        outcome.tokens_out += reply.usage.completion_tokens
        outcome.cost += reply.cost

    def echoed(self, text: str) -> bool:
        """Whether the reply only echoes agentcli's own lines instead of saying something (`echoed-reply`)."""
        return self.run.policies.on("echoed-reply") and echoes_own_lines(text, strict=self.grammar() is not None)

    def grammar(self) -> str | None:
        """The reply protocol's grammar from where the begun reply leaves off, for a model that decodes
        under one (passed only then: other models keep the protocol's older signature)."""
        run = self.run
        if not getattr(run.model, "constrains_replies", False) or not run.policies.on("reply-grammar"):
            return None
        own_lines_barred = run.policies.on("note-copies")
        return reply_grammar(run.state.reply_start, own_lines_barred=own_lines_barred, action_due=run.state.action_due)

    def stopped_in_prose(self, reply: Reply, text: str) -> str | None:
        """Where a reply decoded under the grammar goes on to its action, when it was stopped (a loop,
        too much prose, its token budget) before writing one: its prose cut back to before the loop and
        to its last finished sentence or line. None for a reply that holds its action, or was not
        decoded under the grammar."""
        if reply.tool_call is not None or self.grammar() is None or "```" in text:
            return None
        parsed = parse_reply(text, strict=True)
        if parsed.finished or parsed.command is not None or parsed.file_write is not None:
            return None
        return prose_before_loop(text)

    def _grammar_for_call(self) -> str | None:
        """The grammar the model is called with, its policies journaled as fired."""
        grammar = self.grammar()
        if grammar is not None:
            self.run.policies.fired("reply-grammar")
            if self.run.policies.on("note-copies"):
                self.run.policies.fired("note-copies")
        return grammar

    def _journal_prompt(self, prompt: list[Message], temperature: float | None) -> None:
        """The prompt as an event: what changed since the last one sent."""
        state = self.run.state
        keep = 0
        for sent, message in zip(state.prompt_sent, prompt, strict=False):
            if sent != message:
                break
            keep += 1
        self.run.events.emit(
            ModelPrompt(
                step=self.run.outcome.steps + 1,
                keep=keep,
                messages=[dict(m) for m in prompt[keep:]],
                prefix=state.reply_start,
                temperature=self.run.temperature if temperature is None else temperature,
                progress={
                    "commands_since_plan": state.commands_since_plan,
                    "format_errors": state.format_errors,
                    "echoes_in_a_row": state.echoes_in_a_row,
                    "own_check": state.own_check,
                    "copied_back": sorted(state.copied_back),
                    "reply_definition": state.reply_definition,  # the file whose definition the prefix begins
                    "action_due": state.action_due,
                },
            )
        )
        state.prompt_sent = [dict(m) for m in prompt]

    def _watcher(self) -> Callable[[str], bool]:
        """Relays streamed pieces as events, and asks the model to stop once the reply holds its action
        (what small models write after it, invented output and further steps, is ignored and costs
        seconds) or once it goes round in a loop."""
        run = self.run
        streamed: list[str] = []
        unread = 0  # characters streamed since the reply was last looked at

        def on_token(piece: str) -> bool:
            nonlocal unread
            run.events.emit(TokenStreamed(text=piece))
            streamed.append(piece)
            unread += len(piece)
            if run.out_of_time():
                return True  # the wall clock holds during generation too; the next limit check ends the run
            # Looked at where a line or a fence ends, and every so often within a long line.
            if "\n" not in piece and "`" not in piece and unread < LOOK_EVERY:
                return False
            unread = 0
            text = "".join(streamed)
            # Small models can muse for hundreds of tokens without ever writing a command; past this
            # much prose, stop and ask for the command rather than wait for it.
            return action_complete(text) or repeating(text) or (len(text) > PROSE_LIMIT and "```" not in text)

        return on_token


def reply_text(reply: Reply) -> str:
    """A reply as it reads in the conversation: a tool call in the text protocol's form."""
    return reply.text if reply.tool_call is None else call_text(reply.tool_call, reply.text)


def prose_before_loop(text: str) -> str:
    """The longest start of `text` that ends a sentence or a line and holds no loop (`repeating`), as
    whole lines: a reply goes on from there without the watcher stopping it again."""
    kept = ""
    for cut in _CUT_POINT.finditer(text):
        start = text[: cut.start()].rstrip()
        if repeating(start + "\n"):
            break
        kept = start
    return kept + "\n" if kept else ""
