"""What the model is shown of a command run before its first reply, and which tasks speak of failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.events import CommandFinished, Event, EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from agentcli.session.task_setup import concerns_failures
from tests.conftest import channel_for


@pytest.mark.parametrize(
    ("task", "about_failures"),
    [
        ("The tests in test_pager.py are failing", True),
        ("Bug report: adding stock changes other objects", True),
        ("`python3 main.py` crashes with a KeyError", True),
        ("Make `python3 -m pytest` pass", True),
        ("How many TODO comments are there under src/? Write just the number to todo_count.txt.", False),
        ("Add a `timeout` setting (in seconds, default 30)", False),
        ("Make it raise ValueError when width is not positive", False),
    ],
)
def test_which_tasks_speak_of_tests_or_failures(task: str, about_failures: bool):
    assert concerns_failures(task) is about_failures


def test_the_model_sees_what_ran_before_its_first_reply(tmp_path: Path):
    (tmp_path / "app.py").write_text("from textutils import slugify\n")
    seen: list[Event] = []
    model = ScriptedModel(["DONE: looked"])
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        Agent(model, box, EventBus([seen.append])).run("fix it", first_looks=["python3 app.py"])
    first_prompt = model.calls[0][-1]["content"]
    assert "Before your first reply, agentcli ran `python3 app.py` in the repository:\n[exit 1" in first_prompt
    assert "No module named 'textutils'" in first_prompt
    looked = [e for e in seen if isinstance(e, CommandFinished)]
    assert len(looked) == 1 and looked[0].step == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.py"]  # no __pycache__ left
