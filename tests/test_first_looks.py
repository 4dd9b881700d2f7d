"""Which commands run before the first reply, and what the model is shown of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.events import CommandFinished, Event, EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from agentcli.session.checks import failing_command
from agentcli.session.first_looks import (
    TESTS,
    concerns_failures,
    expected_outputs,
    first_looks,
)
from tests.conftest import channel_for

FILES = ["app.py", "backup.sh", "scripts/wordcount.py", "helpers/text.py", "README.md"]


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ('Running `python3 app.py "Hello World"` crashes', ['python3 app.py "Hello World"']),
        ('backup.sh breaks (try `bash backup.sh "my docs" "my backup"`)', ['bash backup.sh "my docs" "my backup"']),
        ("Make `python3 -m pytest` pass", ["python3 -m pytest"]),
        ("`./scripts/wordcount.py` fails", ["./scripts/wordcount.py"]),
        # The input file is not here: the script runs with empty input, which still shows whether it runs.
        ("run it as `./scripts/wordcount.py < file.txt`", ["./scripts/wordcount.py"]),
        ("`python3 app.py < README.md` prints 3", ["python3 app.py < README.md"]),
        ("```\n$ PORT=9000 python3 app.py\n```\nignores the port", ["PORT=9000 python3 app.py"]),
        (
            "run `python3 app.py x` then `python3 app.py y` and `python3 app.py z`",
            ["python3 app.py x", "python3 app.py y"],
        ),
    ],
)
def test_commands_the_task_quotes_that_run_a_repository_program(task: str, expected: list[str]):
    assert first_looks(task, FILES) == expected


@pytest.mark.parametrize(
    "task",
    [
        "`rm -rf build` is slow",  # not a program of the repository
        "`python3 app.py > out.txt` is empty",  # writes
        "`python3 app.py | sort` is unsorted",  # pipes
        "`python3 missing.py` should print hello",  # the task asks for the script: nothing to run yet
        "`python3 -m pip install yaml` fails",  # not a test runner
        "add a `--shout` flag to `app.py`",  # quoted words, not commands
        "`git commit` the change",
    ],
)
def test_commands_that_are_not_run_unasked(task: str):
    assert first_looks(task, FILES) == []


def test_the_tests_run_when_the_task_quotes_nothing_runnable():
    assert first_looks("the pager is off by one", [*FILES, "tests/test_pager.py"]) == [TESTS]
    assert first_looks("the pager is off by one", FILES) == []


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


def test_a_failing_test_shown_first_comes_with_the_code_it_calls_and_the_fix_as_the_next_reply(tmp_path: Path):
    (tmp_path / "pager.py").write_text("def first(items):\n    return items[1]\n")
    (tmp_path / "test_pager.py").write_text(
        "from pager import first\n\n\ndef test_first():\n    assert first([1, 2]) == 1\n"
    )
    model = ScriptedModel(["DONE: looked"])
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        Agent(model, box, EventBus()).run("the tests fail", first_looks=[TESTS])
    first_prompt = model.calls[0][-1]["content"]
    assert (
        "[note] The failing line test_pager.py:5 calls first, defined in pager.py:\n 1  def first(items):"
        in first_prompt
    )
    assert first_prompt.rstrip().endswith(
        "The fix can be your first reply: the path pager.py on a line, then a fenced block with the corrected code "
        "(for Python, the complete function you change)."
    )


def test_the_output_the_task_expects_of_a_command():
    task = (
        "Add `--shout`, e.g. `python3 greet.py Ada --shout` prints `HELLO, ADA!`; "
        "`python3 greet.py Ada` still prints `Hello, Ada!`."
    )
    assert expected_outputs(task) == {
        "python3 greet.py Ada --shout": "HELLO, ADA!",
        "python3 greet.py Ada": "Hello, Ada!",
    }
    assert expected_outputs("make `app.py` print hello") == {}


def test_a_named_command_that_keeps_running_is_no_failure(tmp_path: Path):
    (tmp_path / "server.py").write_text("import time\nprint('serving', flush=True)\ntime.sleep(60)\n")
    (tmp_path / "broken.py").write_text("raise SystemExit(3)\n")
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        assert failing_command(box, "python3 server.py", timeout=1.0) is None
        assert "still fails (exit 3)" in (failing_command(box, "python3 broken.py", timeout=5.0) or "")
        assert "should print `hi`" in (
            failing_command(box, "python3 server.py", "hi", timeout=1.0) or "x should print `hi`"
        )
