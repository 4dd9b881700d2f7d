"""The context window with the llama.cpp backend: its tokenizer, its window, its context-length errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.context.tokens import TokenCounter, model_window
from agentcli.context.window import ContextWindow, digest_only
from agentcli.events import ContextCompacted, Event, EventBus, ModelReplied
from agentcli.models.base import Message
from agentcli.prompts import render
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, smol_model

pytestmark = pytest.mark.llamacpp


@pytest.fixture(scope="module")
def model():
    return smol_model(n_ctx=1024)


def test_per_message_counts_add_up_to_the_whole_prompt(model) -> None:
    messages: list[Message] = [
        {"role": "system", "content": render("system", workdir="/work")},
        {"role": "user", "content": "Task: the tests in test_calc.py fail; fix calc.py."},
        {"role": "assistant", "content": "Run the tests first.\n```bash\npython3 -m pytest -q\n```"},
        {"role": "user", "content": "[exit 1 · 0.4s]\nFAILED test_calc.py::test_add - assert -1 == 5\n1 failed"},
    ]
    counter = TokenCounter.for_model(model)
    whole = model.count_tokens(messages)
    assert abs(counter.messages(messages) - whole) <= 3
    assert model_window(model) == 1024  # n_ctx, capped by the GGUF's own context length
    assert model_window(model, 700) == 700


def test_context_length_error_from_llama_cpp_is_recovered(model, tmp_path: Path) -> None:
    # The window is told 4096 tokens; llama.cpp runs with 1024 and refuses longer prompts.
    events: list[Event] = []
    context = ContextWindow(model, window=4096, reply_tokens=64, summarizer=digest_only, on_event=events.append)
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        agent = Agent(
            model, box, EventBus([events.append]), limits=RunLimits(max_steps=1, reply_tokens=64), context=context
        )
        outcome = agent.run("Report the line count of every file. " + "Mind the details. " * 400)
    assert outcome.steps == 1, outcome.reason  # the call went through after compaction
    replied = [e for e in events if isinstance(e, ModelReplied)]
    assert replied and replied[0].prompt_tokens < 1024
    assert context.window * context.scale <= 1024  # the limit read from llama.cpp's error message
    assert any(isinstance(e, ContextCompacted) for e in events)
