"""The `agreement` policy: a finished attempt is tried afresh and the files most attempts finished on
stand. The tally on its own; the fingerprint of a state on a real repository; and whole runs through
`agentcli solve` with a scripted model in the host sandbox, whose attempts write given answers."""

from __future__ import annotations

import json
import subprocess

import pytest

from agentcli.repo import checkpoint as cp
from agentcli.session.agreement import Tally, fingerprint
from agentcli.session.journal import sessions_dir
from tests.conftest import committed_repo
from tests.test_policy_switches import bash, fired
from tests.test_solve import agentcli


def test_the_first_finished_leads_until_outvoted():
    tally = Tally()
    assert tally.leader() == [] and tally.attempts_to_overturn() == 1
    tally.add(1, "eight")
    assert tally.leader() == [1] and tally.attempts_to_overturn() == 2  # two others must agree
    tally.add(2, "seven")
    assert tally.leader() == [1] and tally.attempts_to_overturn() == 1  # the tie goes to the first
    tally.add(3, "seven")
    assert tally.leader() == [2, 3] and tally.attempts_to_overturn() == 2


def test_agreeing_attempts_end_the_tally():
    tally = Tally()
    tally.add(1, "eight")
    tally.add(2, "eight")
    assert tally.leader() == [1, 2] and tally.attempts_to_overturn() == 3


def test_a_state_is_known_by_its_files_not_their_spacing_nor_a_commit_message(tmp_path):
    root = committed_repo(tmp_path / "repo", {"count.txt": "0\n", "app.py": "x = 1\n"})
    checkpoint = cp.create_checkpoint(root, "task")
    names = iter(range(100))

    def after(files: dict[str, str], commit: str | None = None) -> str:
        cp.restore(root, checkpoint)
        for path, text in files.items():
            (root / path).write_text(text)
        if commit:
            subprocess.run(["git", "commit", "-qam", commit], cwd=root, check=True)
        state = cp.set_aside(root, f"task-attempt-{next(names)}", checkpoint)
        assert state is not None
        return fingerprint(root, checkpoint, state)

    seven = after({"count.txt": "7\n"})
    assert after({"count.txt": "7  \n\n\n"}) == seven
    assert after({"count.txt": "8\n"}) != seven
    assert after({"count.txt": "7\n", "app.py": "x = 2\n"}) != seven
    committed = after({"count.txt": "7\n"}, commit="count them")
    assert committed != seven  # a commit made is part of the state
    assert after({"count.txt": "7\n"}, commit="another message") == committed


def test_a_file_untracked_and_kept_is_not_a_file_deleted(tmp_path):
    root = committed_repo(tmp_path / "repo", {"debug.log": "noise\n", "app.py": "x = 1\n"})
    checkpoint = cp.create_checkpoint(root, "task")

    def after(command: str, name: str) -> str:
        cp.restore(root, checkpoint)
        subprocess.run(command, shell=True, cwd=root, check=True, capture_output=True)
        state = cp.set_aside(root, f"task-attempt-{name}", checkpoint)
        assert state is not None
        return fingerprint(root, checkpoint, state)

    untracked = after("git rm -q --cached debug.log && echo debug.log > .gitignore && git commit -qam untrack", "a")
    deleted = after("git rm -q debug.log && echo debug.log > .gitignore && git commit -qam untrack", "b")
    assert untracked != deleted
    # The same work tree, but a commit of other content.
    one = after("echo 'x = 2' > app.py && git commit -qam two", "c")
    other = after("echo 'x = 3' > app.py && git commit -qam three && echo 'x = 2' > app.py", "d")
    assert one != other


def _run(tmp_path, answers: list[str], *switches: str) -> tuple[str, list[dict]]:
    """A task whose attempts write `answers` in turn to answer.txt, each then saying DONE: the answer
    the repository is left with, and the run's journal."""
    repo = committed_repo(tmp_path / "repo", {"notes.txt": "three TODO notes\n"})
    replies = []
    for answer in answers:
        replies += [bash(f"echo {answer} > answer.txt && cat answer.txt"), f"DONE: the answer is {answer}."]
    model = tmp_path / "replies.json"
    model.write_text(json.dumps(replies))
    result = agentcli(
        "solve", "Count the TODO notes into answer.txt.", "--model", f"scripted:{model}",
        "--sandbox", "host", "--json", "--timeout", "600", *switches, cwd=repo,
    )  # fmt: skip
    session_id = json.loads(result.stdout.splitlines()[-1])["session_id"]
    journal = (sessions_dir(repo) / session_id / "events.jsonl").read_text()
    return (repo / "answer.txt").read_text().strip(), [json.loads(line) for line in journal.splitlines()]


def _attempts(events: list[dict]) -> int:
    return 1 + sum("tried afresh" in e.get("message", "") for e in events if e["type"] == "notice")


def test_two_later_attempts_that_agree_outvote_the_first(tmp_path):
    answer, events = _run(tmp_path, ["8", "7", "7"], "--policy", "agreement=on")
    assert answer == "7"
    assert _attempts(events) == 3
    assert any("attempts 2 and 3 finished on the same files" in e.get("message", "") for e in events)
    assert fired(events, "agreement")
    firsts = [e["messages"][-1]["content"] for e in events if e["type"] == "model_prompt" and e["keep"] == 0]
    # Each fresh attempt is told that earlier ones finished, never what they wrote.
    assert "Attempt 1 at this task finished" in firsts[1] and "Attempts 1 and 2" in firsts[2]
    assert not any(answer in first.split("Attempt", 1)[1] for first in firsts[1:] for answer in "87")


def test_a_second_attempt_that_agrees_ends_the_run(tmp_path):
    answer, events = _run(tmp_path, ["8", "8", "7"], "--policy", "agreement=on")
    assert answer == "8"
    assert _attempts(events) == 2


@pytest.mark.parametrize("answers", [["8", "7", "6"], ["8", "7", "8"]])
def test_without_a_majority_against_it_the_first_to_finish_stands(tmp_path, answers):
    answer, events = _run(tmp_path, answers, "--policy", "agreement=on")
    assert answer == "8"
    assert _attempts(events) == 3
    result = next(e for e in events if e["type"] == "result")
    assert result["status"] == "finished" and "8" in result["summary"]


def test_off_one_finished_attempt_stands(tmp_path):
    answer, events = _run(tmp_path, ["8", "7", "7"])  # a trial policy: off unless switched on
    assert answer == "8"
    assert _attempts(events) == 1
    assert not fired(events, "agreement")
