"""Forks: where a reply nearly went otherwise (models.forks), and the loop going on from them when greedy
decoding copies an earlier reply (policy `forks`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.events import CommandStarted, Event, EventBus, ModelPrompt, PolicyFired
from agentcli.models.forks import ForkRecorder
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for

PIECES = {0: b"a", 1: b"b", 2: b"c", 3: b"d", 4: "é".encode()[:1], 5: "é".encode()[1:]}


def text_of(tokens: list[int]) -> bytes:
    return b"".join(PIECES[t] for t in tokens)


def recorded(*steps: dict[int, float], allowed=None) -> ForkRecorder:
    """A recorder that saw one logits row per step, each holding the given logits (others far below)."""
    recorder = ForkRecorder(allowed)
    note = recorder.processor()
    for logits in steps:
        row = np.full(len(PIECES) + 4, -50.0, dtype=np.float32)
        for token, logit in logits.items():
            row[token] = logit
        before = row.copy()
        note(None, row)
        assert np.array_equal(row, before, equal_nan=True)  # noting changes nothing
    return recorder


def test_forks_are_the_runner_ups_closest_call_first():
    recorder = recorded({0: 5.0, 1: 1.0}, {1: 3.0, 2: 2.5}, {2: 4.0, 3: -np.inf})
    # The reply "abc": at its second token "c" came within 0.5 of "b"; at its first, "b" within 4.
    assert recorder.forks([0, 1, 2], "abc", text_of)[:2] == ["ac", "b"]


def test_a_fork_past_the_kept_text_or_not_whole_characters_is_left_out():
    recorder = recorded({0: 5.0, 4: 4.9}, {1: 3.0, 2: 2.9}, {2: 4.0, 3: 3.9})
    # Cut after "ab" (a stop sequence): no fork at the third token; half an "é" is no text to go on from.
    assert recorder.forks([0, 1, 2], "ab", text_of) == ["ac"]


def test_only_a_runner_up_the_grammar_allows_is_a_fork():
    recorder = recorded({0: 5.0, 1: 4.9, 2: 1.0}, allowed=lambda token: token != 1)
    assert recorder.forks([0], "a", text_of) == ["c"]
    assert recorded({0: 5.0, 1: 4.9}, allowed=lambda token: token == 0).forks([0], "a", text_of) == []


def test_a_sampled_token_that_was_not_the_likeliest_forks_to_the_likeliest():
    assert recorded({0: 5.0, 1: 4.0}).forks([1], "b", text_of) == ["a"]


def bash(command: str) -> str:
    return f"```bash\n{command}\n```"


def run(tmp_path: Path, replies: list, *switches: str) -> tuple[list[Event], ScriptedModel]:
    seen: list[Event] = []
    policies = Policies.chosen("small-local", ["retries=off", *switches])
    policies.on_fired = lambda name: seen.append(PolicyFired(name=name))
    model = ScriptedModel(replies, continues_replies=True)
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        Agent(model, box, EventBus([seen.append]), limits=RunLimits(), policies=policies).run("look around")
    return seen, model


def commands(events: list[Event]) -> list[str]:
    return [e.command for e in events if isinstance(e, CommandStarted)]


def test_a_copied_reply_goes_on_from_its_forks_until_one_acts_otherwise(tmp_path):
    (tmp_path / "a.txt").write_text("1\n")
    first_fork, second_fork = "I list again.\n```bash\nls", "I read.\n```bash\ncat a"
    replies = [
        "I list.\n" + bash("ls"),
        {"text": "I list.\n" + bash("ls"), "forks": [first_fork, second_fork]},
        first_fork + "\n```",  # another thought, the same command: the next fork is tried
        second_fork + ".txt\n```",
        "DONE: read it",
    ]
    events, model = run(tmp_path, replies)
    assert commands(events) == ["ls", "cat a.txt"]
    assert model.prefixes[2:4] == [first_fork, second_fork]
    assert PolicyFired(name="forks") in events
    temperatures = [e.temperature for e in events if isinstance(e, ModelPrompt)]
    assert temperatures[2:4] == [temperatures[0]] * 2  # the run's own (greedy): the likeliest reply that differs


def test_a_fork_inside_a_done_line_is_not_taken(tmp_path):
    replies = [
        "Nothing to do.\nDONE: nothing",
        {"text": "Nothing to do.\nDONE: nothing", "forks": ["Nothing to do.\nDONE: all", "Nothing to see.\n"]},
        "```bash\nls\n```",
        "DONE: looked",
    ]
    events, model = run(tmp_path, replies)
    assert model.prefixes[2] == "Nothing to see.\n"
    assert commands(events) == ["ls"]


@pytest.mark.parametrize("switch", ["forks=off", "resample=off"])
def test_without_the_policy_no_fork_is_taken(tmp_path, switch):
    replies = [bash("ls"), {"text": bash("ls"), "forks": ["```bash\npwd"]}, bash("pwd"), "DONE: ok"]
    events, model = run(tmp_path, replies, switch)
    assert "```bash\npwd" not in model.prefixes
    assert PolicyFired(name="forks") not in events
