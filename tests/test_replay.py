"""The journal is the trajectory: every prompt the model saw is rebuilt from the journal alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from agentcli.session.journal import read_events
from agentcli.session.replay import prompts
from agentcli.session.solve import SolveRequest, solve
from tests.conftest import FIX_REPLIES


def _run(repo: Path, replies: list[str], monkeypatch, tmp_path: Path, **settings) -> tuple[list, list]:
    """Solve with a scripted model; what the model was sent, call by call, and the journal's events."""
    seen: list[tuple[list, str]] = []
    complete = ScriptedModel.complete

    def recording(self, messages, **kwargs):
        seen.append(([dict(m) for m in messages], kwargs.get("prefix", "")))
        return complete(self, messages, **kwargs)

    monkeypatch.setattr(ScriptedModel, "complete", recording)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    flags = {"model": f"scripted:{script}", "sandbox": "host", **settings}
    result = solve(SolveRequest(task="Fix the failing test.", repo=repo, settings=load_settings(repo, flags)))
    assert result.journal_path is not None
    return seen, read_events(result.journal_path)


def test_every_prompt_is_rebuilt_from_the_journal(failing_repo: Path, monkeypatch, tmp_path: Path):
    seen, events = _run(failing_repo, FIX_REPLIES, monkeypatch, tmp_path)
    rebuilt = prompts(events)
    assert len(seen) == len(rebuilt) >= len(FIX_REPLIES)
    for (messages, prefix), prompt in zip(seen, rebuilt, strict=True):
        assert prompt.messages == messages and prompt.prefix == prefix
    # Each step journals only what is new: the prompt grows, the journal does not repeat it.
    new = [e for e in events if e["type"] == "model_prompt"]
    assert all(e["keep"] > 0 for e in new[1:])
    assert sum(len(json.dumps(e["messages"])) for e in new) < sum(len(json.dumps(p.messages)) for p in rebuilt)


def test_prompts_survive_compaction(failing_repo: Path, monkeypatch, tmp_path: Path):
    """A small context budget folds early turns into a summary: the prompts still rebuild exactly."""
    chatty = [f"```bash\nseq {i} {i + 399}\n```" for i in range(1, 7)] + FIX_REPLIES
    seen, events = _run(failing_repo, chatty, monkeypatch, tmp_path, context_budget=2600, max_steps=12)
    rebuilt = prompts(events)
    assert any(e["type"] == "context_compacted" for e in events)
    assert [p.messages for p in rebuilt] == [messages for messages, _ in seen]
    assert any(e["type"] == "model_prompt" and e["keep"] < 3 for e in events[5:])  # a prompt was rewritten


def test_a_journal_that_skips_a_prompt_is_refused():
    events = [{"type": "model_prompt", "step": 1, "keep": 2, "messages": [{"role": "user", "content": "x"}]}]
    with pytest.raises(ValueError, match="keeps 2 messages"):
        prompts(events)


def test_every_command_anything_ran_is_in_the_journal_once(failing_repo: Path, monkeypatch, tmp_path: Path):
    ran: list[str] = []
    run = HostSandbox.run

    def counting(self, command, timeout=None):
        ran.append(command)
        return run(self, command, timeout=timeout)

    monkeypatch.setattr(HostSandbox, "run", counting)
    _, events = _run(failing_repo, FIX_REPLIES, monkeypatch, tmp_path)
    model = [e["command"] for e in events if e["type"] == "command_finished"]
    side = [e["command"] for e in events if e["type"] == "side_command"]
    # The model's commands and the first looks as commands, the rest (the tests run on DONE among them)
    # as side commands; each once.
    assert len(ran) == len(model) + len(side) and side
    assert any("pytest" in command for command in side)
    assert all(e["output"] == e["output"][:2000] for e in events if e["type"] == "side_command")
