"""A step's reply: asked for, asked again at a higher temperature where it only echoes agentcli's lines
(policy `echoed-reply`), gone on to its action where it was stopped in its prose (policy `action-due`),
chosen among candidates where the checks can choose (policy `select`), counted and journaled as the
step's `model_replied`."""

from __future__ import annotations

import time

from agentcli.agent.asking import ModelCalls, reply_text
from agentcli.agent.candidates import Candidates
from agentcli.agent.outcome import Stop
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.run_context import RunContext
from agentcli.events import ModelReplied, ModelStarted, ModelTokens, ReplyAskedAgain
from agentcli.models.base import ModelGaveUp, Reply

# Sampling temperature for a second try when a reply only echoes agentcli's lines.
RESAMPLE_TEMPERATURE = 0.7


def step_reply(ctx: RunContext, calls: ModelCalls, candidates: Candidates, step: int) -> tuple[str, ParsedReply]:
    """The reply step `step` goes on with, as it reads and as an action; its tokens counted, the
    candidates' among them."""
    state = ctx.state
    ctx.events.emit(ModelStarted(step=step))
    started = time.monotonic()
    try:
        asked = time.monotonic()
        reply = calls.complete()
        echoed = calls.echoed(reply_text(reply))
        if echoed:
            ctx.policies.fired("echoed-reply")
            # A reply that echoes our own notes back has nothing of its own to say; one sample at a
            # higher temperature breaks the copy.
            _set_aside(ctx, calls, reply, step, "echoed a note of agentcli's instead of replying", asked)
            asked = time.monotonic()
            reply = calls.complete(temperature=RESAMPLE_TEMPERATURE)
        if ctx.policies.on("action-due") and not ctx.out_of_time():
            prose = calls.stopped_in_prose(reply, reply_text(reply))
            if prose is not None:
                # Stopped in a loop or a ramble, the reply would be malformed; from its prose, the grammar
                # now allows only the action.
                ctx.policies.fired("action-due")
                _set_aside(ctx, calls, reply, step, "stopped before its action", asked)
                state.reply_start, state.action_due = prose, True
                asked = time.monotonic()
                reply = calls.complete(temperature=RESAMPLE_TEMPERATURE if echoed else None)
        text = reply_text(reply)
        parsed = calls.read(reply, text)
        calls.account(reply)  # with candidates, every one's tokens count, the one kept among them
        if candidates.wanted(parsed, reply_seconds=time.monotonic() - asked):
            taken = RESAMPLE_TEMPERATURE if echoed else ctx.temperature
            reply, text, parsed = candidates.choose(step, reply, text, parsed, taken)
    except ModelGaveUp as e:
        raise Stop("failed", f"model gave up: {e}" if str(e) else "model gave up") from None
    finally:
        state.begun_definition_in = state.reply_definition
        state.reply_start, state.reply_definition, state.action_due = "", None, False
    ctx.outcome.steps = step
    usage = reply.usage
    ctx.events.emit(
        ModelReplied(
            step=step, text=text, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            cost=reply.cost, duration=time.monotonic() - started, prompt_evaluated=usage.prompt_evaluated,
        )
    )  # fmt: skip
    if isinstance(reply.raw, dict) and isinstance(ids := reply.raw.get("tokens"), dict):
        ctx.events.emit(ModelTokens(step=step, **ids))
    return text, parsed


def _set_aside(ctx: RunContext, calls: ModelCalls, reply: Reply, step: int, why: str, asked: float) -> None:
    """Journal a reply the step does not keep, and count its tokens."""
    calls.account(reply)
    usage = reply.usage
    ctx.events.emit(
        ReplyAskedAgain(
            step=step, text=reply_text(reply), why=why, prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens, cost=reply.cost, duration=time.monotonic() - asked,
            prompt_evaluated=usage.prompt_evaluated,
        )
    )  # fmt: skip
