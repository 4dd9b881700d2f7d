"""Policy `review` (off unless switched on): the first DONE that passes the other checks is answered with
the task, as the user wrote it, beside the diff of each file the run changed; the next DONE stands."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentcli.agent.loop import Agent
from agentcli.events import EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.repo.tree_changes import TreeChanges
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, committed_repo
from tests.test_changes_shown import told
from tests.test_solve import agentcli

TASK = "Add a timeout setting with a default of 30, and use it in dsn()."


@contextmanager
def _agent(repo: Path, replies: list[str]) -> Iterator[tuple[Agent, ScriptedModel, list[str]]]:
    """An agent on the host in `repo`, every policy on, that sees what its commands change; the names of
    the policies that fired."""
    fired: list[str] = []
    policies = Policies.every()
    policies.on_fired = fired.append
    model = ScriptedModel(replies)
    with HostSandbox(repo, channel_for(repo)) as box:
        agent = Agent(model, box, EventBus(), policies=policies)
        agent.ctx.facts.tree_changes = TreeChanges(repo)
        yield agent, model, fired


def _user_messages(model: ScriptedModel) -> list[str]:
    return [m["content"] for call in model.calls for m in call if m["role"] == "user"]


def test_first_done_sees_the_task_beside_the_diff_and_the_second_stands(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"db.py": "def dsn():\n    return 'pg://x'\n"})
    replies = [
        "```bash\nsed -i 's#pg://x#pg://x?t=30#' db.py && cat db.py\n```",
        "DONE: the timeout is in dsn()",
        "```bash\npython3 -c 'import db; print(db.dsn())'\n```",
        "DONE: checked",
    ]
    with _agent(repo, replies) as (agent, model, fired):
        outcome = agent.run(TASK)
    assert outcome.status == "finished" and outcome.summary == "checked"
    review = model.calls[2][-1]["content"]
    assert review.startswith("[no command ran] Not done yet: compare the task")
    assert f"The task: {TASK}" in review
    assert "-    return 'pg://x'" in review and "+    return 'pg://x?t=30'" in review
    assert "review" in fired


def test_a_done_repeating_the_task_words_is_no_echo_of_the_review(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"db.py": "x = 1\n"})
    # Words of the task the review quoted are the user's, not agentcli's.
    replies = [
        "```bash\nsed -i 's/1/2/' db.py && cat db.py\n```",
        "DONE: changed x",
        "DONE: Add a timeout setting with a default of 30",
    ]
    with _agent(repo, replies) as (agent, model, fired):
        outcome = agent.run(TASK)
    assert outcome.status == "finished" and outcome.steps == 3
    assert any("compare the task" in m for m in _user_messages(model))
    assert "review" in fired and "echoed-done" not in fired


def test_a_new_file_is_shown_whole_and_no_change_gets_no_review(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"README.md": "hi\n"})
    with _agent(repo, ["```bash\nprintf 'a\\nb\\n' > notes.txt\n```", "DONE: a", "DONE: b"]) as (agent, model, _):
        agent.run("write notes")
    review = next(m for m in _user_messages(model) if "compare the task" in m)
    assert "+a\n+b" in review
    repo = committed_repo(tmp_path / "repo2", {"README.md": "hi\n"})
    with _agent(repo, ["```bash\ncat README.md\n```", "DONE: looked"]) as (agent, model, _):
        assert agent.run("look").status == "finished"
    assert not any("compare the task" in m for m in _user_messages(model))


def test_off_by_default_and_switched_on_in_a_solve(tmp_path: Path, write_replies):
    repo = committed_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    replies = ["```bash\necho 'y = 2' >> app.py && cat app.py\n```", "DONE: added", "DONE: added y"]
    for switch, reviewed in (([], False), (["--policy", "review=on"], True)):
        model = write_replies(replies)
        result = agentcli("solve", "add y", "--model", model, "--sandbox", "host", "--json", *switch, cwd=repo)
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert events[-1]["status"] == "finished"
        assert any("compare the task" in m for m in told(repo, events)) is reviewed
        agentcli("undo", cwd=repo)
