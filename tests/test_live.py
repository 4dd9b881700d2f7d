"""The REPL's live view of a run (agentcli.ui.live): streamed prose, and a reply asked again."""

from __future__ import annotations

import io

from rich.console import Console

from agentcli.events import ModelReplied, ModelStarted, ReplyAskedAgain, TokenStreamed
from agentcli.ui.live import LiveRenderer


def test_a_reply_asked_again_ends_the_first_stream_and_the_second_streams_afresh() -> None:
    out = io.StringIO()
    view = LiveRenderer(Console(file=out, width=100, color_system=None))
    # The first reply was cut inside its block (it ran on): the second's prose is not taken for code.
    first, second = "I will look at it\n```bash\nls -R", "Now I change it\n```bash\nsed -i s/a/b/ f\n```"
    view(ModelStarted(step=2))
    for piece in (first[:9], first[9:]):
        view(TokenStreamed(text=piece))
    view(ReplyAskedAgain(2, first, "stopped before its action", 10, 5, 0.0, 0.5))
    view(TokenStreamed(text=second))
    view(ModelReplied(step=2, text=second, prompt_tokens=10, completion_tokens=5, cost=0.0, duration=1.0))
    shown = out.getvalue()
    lines = [line for line in shown.splitlines() if line.strip()]
    assert lines == [
        "I will look at it",
        "the model stopped before its action: asking again",
        "Now I change it",
    ], shown
