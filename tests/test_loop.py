"""The loop driven by the scripted model through a real host sandbox: limits, stuck detection, finishing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.checking import check_command, only_changes
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.agent.stuck import StuckDetector
from agentcli.events import (
    CommandFinished,
    Event,
    EventBus,
    FormatError,
    ModelReplied,
    Nudge,
    PlanUpdated,
    ReplyAskedAgain,
)
from agentcli.models.base import Message, Reply, Usage
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for


@pytest.fixture
def host(tmp_path: Path):
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        yield box


def run(replies: list[str], host, **limits) -> tuple[object, list[Event]]:
    seen: list[Event] = []
    agent = Agent(ScriptedModel(replies), host, EventBus([seen.append]), limits=RunLimits(**limits))
    return agent.run("do the thing"), seen


def test_finishes_with_summary_and_plan(host):
    outcome, events = run(
        ["1. Make a file.\n2. Check it.\n```bash\necho hi > f.txt\n```", "```bash\ncat f.txt\n```", "DONE: made f.txt"],
        host,
    )
    assert outcome.status == "finished" and outcome.summary == "made f.txt"
    assert outcome.steps == 3
    assert [e.steps for e in events if isinstance(e, PlanUpdated)] == [["Make a file", "Check it"]]
    outputs = [e.output for e in events if isinstance(e, CommandFinished)]
    assert outputs == ["", "hi\n"]


def test_model_gave_up_when_replies_run_out(host):
    outcome, _ = run(["```bash\ntrue\n```"], host)
    assert outcome.status == "failed" and "gave up" in outcome.reason


def test_step_limit(host):
    outcome, _ = run([f"```bash\necho {i}\n```" for i in range(10)], host, max_steps=3)
    assert outcome.status == "failed" and "step limit" in outcome.reason and outcome.steps == 3


def test_wall_time_limit_also_bounds_commands(host):
    replies = [f"Wait {i}.\n```bash\nsleep 2{i}\n```" for i in range(10)]
    outcome, events = run(replies, host, timeout=4.5)
    assert outcome.status == "failed" and "time limit" in outcome.reason
    finished = [e for e in events if isinstance(e, CommandFinished)]
    # Each command may take a third of the time left, so the run sees a timeout and goes on.
    assert all(e.timed_out for e in finished) and 2 <= len(finished) <= 4
    assert finished[0].duration < 3


def test_consecutive_format_errors_limit(host):
    outcome, events = run(["thinking...", "still thinking", "hmm", "```bash\ntrue\n```"], host, max_format_errors=3)
    assert outcome.status == "failed" and "no usable command" in outcome.reason
    assert [e.count for e in events if isinstance(e, FormatError)] == [1, 2, 3]


def test_format_error_counter_resets_after_a_command(host):
    replies = ["hmm", "hmm", "```bash\ntrue\n```", "hmm", "hmm", "DONE: ok"]
    outcome, _ = run(replies, host, max_format_errors=3)
    assert outcome.status == "finished"


class CostlyModel(ScriptedModel):
    """Scripted replies that each report a price and a token count, like a hosted API."""

    def complete(self, messages: list[Message], **kwargs) -> Reply:
        reply = super().complete(messages, **kwargs)
        return Reply(reply.text, Usage(prompt_tokens=1000, completion_tokens=100), cost=0.02)


def test_token_and_cost_limits(host):
    replies = [f"```bash\necho {i}\n```" for i in range(10)]
    agent = Agent(CostlyModel(replies), host, EventBus(), limits=RunLimits(max_tokens=3000))
    outcome = agent.run("task")
    assert "token limit" in outcome.reason and outcome.steps == 3
    agent = Agent(CostlyModel(replies), host, EventBus(), limits=RunLimits(max_cost=0.05))
    outcome = agent.run("task")
    assert "cost limit" in outcome.reason and outcome.steps == 3 and outcome.cost == pytest.approx(0.06)


def test_repeated_command_nudges_then_stops(host):
    outcome, events = run(["```bash\necho same\n```"] * 10, host)
    nudges = [e for e in events if isinstance(e, Nudge)]
    assert len(nudges) == 1 and "same command" in nudges[0].reason
    assert outcome.status == "failed" and outcome.reason.startswith("stuck")
    assert outcome.steps == 4


def test_alternating_commands_are_caught(host):
    replies = [f"Try {i}.\n```bash\necho {'ab'[i % 2]}\n```" for i in range(20)]
    outcome, events = run(replies, host)
    assert any("alternated" in e.reason for e in events if isinstance(e, Nudge))
    assert outcome.reason.startswith("stuck")


def test_commands_alternating_with_outputs_that_differ_only_in_numbers_are_caught(host):
    # `todo.py add ID` then `todo.py done ID`, again and again: the add's counter goes up each time.
    count = "n=$(( $(cat n 2>/dev/null || echo 0) + 1 )); echo $n > n; echo added $n"
    replies = [f"Try {i}.\n```bash\n{count if i % 2 else 'echo no such command'}\n```" for i in range(20)]
    outcome, events = run(replies, host)
    assert any("alternated" in e.reason for e in events if isinstance(e, Nudge))
    assert outcome.reason.startswith("stuck") and outcome.steps == 7


def test_three_commands_going_round_are_caught(host):
    # validate-input: an echo into geometry.py, one into test_geometry.py and a test run, 18 steps round.
    replies = [f"Step {i}.\n```bash\necho {'abc'[i % 3]}\n```" for i in range(30)]
    outcome, events = run(replies, host)
    nudges = [e.reason for e in events if isinstance(e, Nudge)]
    assert nudges == ["alternating: three commands went round 3 times with unchanged output"]
    assert outcome.reason.startswith("stuck") and outcome.steps == 10


def test_error_streak(host):
    replies = [f"```bash\nfalse {i}\n```" for i in range(20)]
    outcome, events = run(replies, host)
    assert any("in a row failed" in e.reason for e in events if isinstance(e, Nudge))
    assert outcome.reason.startswith("stuck") and outcome.steps == 10


def test_nudge_text_reaches_the_model(host):
    model = ScriptedModel([f"Attempt {i}.\n```bash\necho same\n```" for i in range(4)])
    Agent(model, host, EventBus()).run("task")
    last_prompt = model.calls[-1]
    assert any("You seem stuck" in m["content"] for m in last_prompt)


def test_done_with_failing_command_does_not_finish(host):
    # The failed command voids its DONE; a plain DONE right after a failure is questioned once.
    outcome, events = run(["```bash\nfalse\n```\nDONE: all good", "DONE: sure", "DONE: really done"], host)
    assert outcome.status == "finished" and outcome.summary == "really done" and outcome.steps == 3
    assert any("last command failed" in e.message for e in events if isinstance(e, FormatError))


def test_finish_check_objects_once(host):
    seen: list[Event] = []
    replies = ["```bash\ntrue\n```", "DONE: looked", "DONE: looked again"]
    agent = Agent(
        ScriptedModel(replies),
        host,
        EventBus([seen.append]),
        finish_checks=[DoneCheck("unchanged", lambda: "Nothing changed.", code=True)],
    )
    outcome = agent.run("task")
    assert outcome.status == "finished" and outcome.steps == 3
    objections = [e.message for e in seen if isinstance(e, FormatError)]
    assert len(objections) == 1 and objections[0].startswith("Not done yet: Nothing changed.")


def test_a_done_line_the_model_s_script_prints_is_its_done(host):
    # The 1.5B ends its one script with print("DONE: ..."): the checks judge it as a DONE reply.
    seen: list[Event] = []
    script = '```python\nopen("out.csv", "w").write("b\\na\\n")\nprint("DONE: wrote out.csv")\n```'
    replies = [script, "```bash\nsort -o out.csv out.csv\n```\nDONE: sorted"]
    checks = [
        DoneCheck(
            "tests",
            lambda: None if (host.repo / "out.csv").read_text() == "a\nb\n" else "out.csv is unsorted.",
        )
    ]
    outcome = Agent(ScriptedModel(replies), host, EventBus([seen.append]), finish_checks=checks).run("task")
    assert outcome.status == "finished" and outcome.summary == "sorted" and outcome.steps == 2
    assert next(e.message for e in seen if isinstance(e, FormatError)).startswith("Not done yet: out.csv is unsorted.")
    # A DONE line a program prints that the model did not write is the program's output, not a claim.
    outcome, _ = run(["```bash\necho RE9ORTogeAo= | base64 -d\n```"], host)
    assert outcome.status == "failed"


def test_done_before_any_command_is_questioned(host):
    outcome, events = run(["The task is complete.", "```bash\ntrue\n```", "DONE: did it"], host)
    assert outcome.status == "finished" and outcome.steps == 3
    assert any(isinstance(e, FormatError) for e in events)


def test_stuck_detector_unit():
    detector = StuckDetector(repeats=2)
    detector.record("ls", "a", 0)
    assert detector.check() is None
    detector.record("ls", "a", 0)
    assert detector.check()[0] == "nudge"
    detector.record("ls", "a", 0)
    assert detector.check()[0] == "stop"


class SlowStreamingModel(ScriptedModel):
    """Streams its reply a word at a time, slowly, and stops when asked: like a local model."""

    def complete(self, messages, *, max_tokens=None, on_token=None, temperature=None, prefix=""):
        import time as clock

        self.calls.append(list(messages))
        sent = []
        for word in ("thinking " * 200).split():
            clock.sleep(0.01)
            sent.append(word + " ")
            if on_token is not None and on_token(word + " "):
                break
        return Reply("".join(sent), Usage(prompt_tokens=10, completion_tokens=len(sent)))


def test_wall_clock_stops_a_long_generation(host):
    agent = Agent(SlowStreamingModel([]), host, EventBus(), limits=RunLimits(timeout=0.5))
    outcome = agent.run("task")
    assert "time limit" in outcome.reason and outcome.wall_time < 1.5


class DoneAtTheDeadline(SlowStreamingModel):
    def complete(self, messages, *, max_tokens=None, on_token=None, temperature=None, prefix=""):
        reply = super().complete(messages, max_tokens=max_tokens, on_token=on_token)
        return Reply("The task is done. " + reply.text, reply.usage)


def test_a_reply_cut_by_the_deadline_is_not_acted_on(host):
    agent = Agent(DoneAtTheDeadline([]), host, EventBus(), limits=RunLimits(timeout=0.5))
    agent.ctx.commands_ran.append("ls")  # as if work had been done: only the deadline may stop this finish
    outcome = agent.run("task")
    assert outcome.status == "failed" and "time limit" in outcome.reason


def test_sed_that_matches_nothing_is_reported_and_a_real_edit_shows_its_diff(host):
    (Path(host.workdir) / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = ScriptedModel(
        [
            "```bash\nsed -i 's/add\\(a,b\\)/x/' calc.py\n```",  # neither as a pattern nor as plain text
            "```bash\n# Fix the sign\nsed -i 's/a - b/a + b/' calc.py\n```",  # a comment above it counts not
            "DONE: fixed",
        ]
    )
    Agent(model, host, EventBus()).run("fix add")
    first, second = model.calls[1][-1]["content"], model.calls[2][-1]["content"]
    assert "sed changed nothing in calc.py" in first
    assert "-    return a - b" in second and "+    return a + b" in second


def test_sed_that_replaces_a_text_with_itself_is_told_so(host):
    # git-branch-commit: the misspelling the task names, written as both pattern and replacement.
    (Path(host.workdir) / "README.md").write_text("You will recieve it.\n")
    model = ScriptedModel(["```bash\n# Fix it\nsed -i 's/recieve/recieve/g' README.md\n```", "DONE: fixed"])
    Agent(model, host, EventBus()).run("fix the misspelling")
    observation = model.calls[1][-1]["content"]
    assert "sed replaced `recieve` with the same text, so nothing changed in README.md" in observation
    assert "matched no line" not in observation


def test_editor_commands_show_the_file_instead(host):
    (Path(host.workdir) / "greet.py").write_text("print('hi')\n")
    model = ScriptedModel(["```bash\nvim greet.py\n```", "DONE: looked"])
    outcome, events = None, []
    agent = Agent(model, host, EventBus([events.append]))
    outcome = agent.run("look")
    finished = [e for e in events if isinstance(e, CommandFinished)]
    assert finished[0].command == "cat -n greet.py" and "print('hi')" in finished[0].output
    assert "vim is interactive" in model.calls[1][-1]["content"]
    assert outcome.steps >= 2


def test_done_without_any_command_is_never_accepted(host):
    outcome, events = run([f"DONE: did it ({i})" for i in range(6)], host, max_format_errors=4)
    assert outcome.status == "failed" and "no usable command" in outcome.reason
    assert all("not run any command" in e.message for e in events if isinstance(e, FormatError))


class RamblingModel(ScriptedModel):
    """Streams line after line of prose and never a command, unless told to stop."""

    def complete(self, messages, *, max_tokens=None, on_token=None, temperature=None, prefix=""):
        self.calls.append(list(messages))
        if len(self.calls) > 1:
            return Reply("DONE: stopped rambling", Usage(prompt_tokens=10, completion_tokens=3))
        sent = []
        for i in range(400):
            line = f"THOUGHT: {chr(97 + i % 26) * (1 + i // 26)} might need a change.\n"  # never the same line
            sent.append(line)
            if on_token is not None and on_token(line):
                break
        return Reply("".join(sent), Usage(prompt_tokens=10, completion_tokens=len(sent)))


def test_long_prose_without_a_command_is_cut_short(host):
    model = RamblingModel([])
    events: list[Event] = []
    Agent(model, host, EventBus([events.append]), limits=RunLimits(max_steps=2)).run("task")
    first = next(e for e in events if isinstance(e, ModelReplied))
    assert 1500 < len(first.text) < 1700
    assert any("No command found" in e.message for e in events if isinstance(e, FormatError))


class OneLineLoopingModel(ScriptedModel):
    """The 1.5B's plan whose last step goes round in one line (1,024 tokens, 35 s on 2 cores, seen on a
    task of the test split), unless told to stop."""

    def complete(self, messages, *, max_tokens=None, on_token=None, temperature=None, prefix=""):
        self.calls.append(list(messages))
        sent = ["PLAN:\n", "1. Review the changes.\n", "2. DONE: The task is complete."]
        sent += [" The task is", " done.", " The changes have", " been committed", " and pushed."] * 200
        for number, piece in enumerate(sent, 1):
            if on_token is not None and on_token(piece):
                return Reply("".join(sent[:number]), Usage(prompt_tokens=10, completion_tokens=number))
        return Reply("".join(sent), Usage(prompt_tokens=10, completion_tokens=len(sent)))


def test_a_reply_going_round_within_one_line_is_cut_short(host):
    events: list[Event] = []
    Agent(OneLineLoopingModel([]), host, EventBus([events.append]), limits=RunLimits(max_steps=1)).run("task")
    first = next(e for e in events if isinstance(e, ModelReplied))
    assert first.text.count("The task is done.") < 10  # not 200: looked at every 200 characters
    assert any(isinstance(e, FormatError) for e in events)  # no command ran: the model is told so


class LoopingModel(ScriptedModel):
    """The 1.5B's first reply to a broken test suite: a plan step and an empty block, numbered on and on
    up to the token limit (158 s on 2 cores), unless told to stop."""

    def complete(self, messages, *, max_tokens=None, on_token=None, temperature=None, prefix=""):
        self.calls.append(list(messages))
        if len(self.calls) > 1:
            return super().complete(messages, max_tokens=max_tokens, on_token=on_token, temperature=temperature)
        steps = ["Identify the issue in `perimeter`.", "Correct the syntax error.", "Run the tests again."]
        steps += ["If the tests pass, the issue is resolved. If not, repeat the process."] * 40
        sent = []
        for number, step in enumerate(steps, 1):
            for line in (f"PLAN: {number}. {step}\n", "```bash\n", "```\n", "\n"):
                sent.append(line)
                if on_token is not None and on_token(line):
                    return Reply("".join(sent), Usage(prompt_tokens=10, completion_tokens=len(sent)))
        return Reply("".join(sent), Usage(prompt_tokens=10, completion_tokens=len(sent)))


def test_a_reply_going_round_in_a_loop_is_cut_short_and_its_plan_keeps_the_distinct_steps(host):
    model = LoopingModel(["```bash\nls\n```", "DONE: looked"])
    events: list[Event] = []
    Agent(model, host, EventBus([events.append])).run("fix the tests")
    first = next(e for e in events if isinstance(e, ModelReplied))
    assert first.text.count("PLAN:") == 2  # stopped at the second empty block
    plans = [e.steps for e in events if isinstance(e, PlanUpdated)]
    assert plans == [["Identify the issue in `perimeter`", "Correct the syntax error"]]
    assert any("Your ```bash block was empty" in e.message for e in events if isinstance(e, FormatError))


PAGER = """def page_count(total, per_page):
    return (total + per_page - 1) // per_page


def paginate(items, page, per_page):
    start = page * per_page
    return items[start : start + per_page]
"""


def test_an_unnamed_python_block_goes_to_the_file_that_defines_it_then_done_counts(host):
    # What the 1.5B wrote: a "REPLACING:" block with no file name, and DONE after it.
    (Path(host.workdir) / "pager.py").write_text(PAGER)
    (Path(host.workdir) / "test_pager.py").write_text("from pager import paginate\n")
    fix = (
        "def paginate(items, page, per_page):\n"
        "    start = (page - 1) * per_page\n"
        "    return items[start : start + per_page]"
    )
    seen: list[Event] = []
    replies = [f"REPLACING:\n```python\n{fix}\n```\n\nDONE: fixed paginate", "DONE: fixed paginate"]
    outcome = Agent(ScriptedModel(replies), host, EventBus([seen.append])).run("fix the pager")
    assert outcome.status == "finished" and outcome.summary == "fixed paginate" and outcome.steps == 2
    objections = [e.message for e in seen if isinstance(e, FormatError)]
    assert len(objections) == 1 and "changed files but showed nothing of the result" in objections[0]
    text = (Path(host.workdir) / "pager.py").read_text()
    assert "start = (page - 1) * per_page" in text and "def page_count" in text  # spliced, the rest kept
    started = [e for e in seen if type(e).__name__ == "CommandStarted"]
    assert "pager.py defines paginate, so it went there" in started[0].notes[-1]


def test_done_that_reports_a_step_is_no_finish(host):
    # json-to-csv: "DONE: Plan 1 completed. Now, let's convert the JSON to CSV." after reading the file.
    replies = [
        "```bash\necho a > f.txt\n```",
        "DONE: Plan 1 completed. Now, let's check it.",
        "```bash\ncat f.txt\n```",
        "DONE: wrote f.txt",
    ]
    outcome, events = run(replies, host)
    assert outcome.status == "finished" and outcome.summary == "wrote f.txt" and outcome.steps == 4
    objections = [e.message for e in events if isinstance(e, FormatError)]
    assert len(objections) == 1 and objections[0].startswith("`DONE:` ends the whole task, not one step of it")


def test_python_code_in_a_bash_block_is_taken_as_python(host):
    # implement-from-docstring: `import re` and the implemented function, in a ```bash block.
    (Path(host.workdir) / "durations.py").write_text(
        '"""Durations."""\n\n\ndef format_duration(seconds: int) -> str:\n    return f"{seconds}s"\n\n\n'
        'def parse_duration(text: str) -> int:\n    """Seconds."""\n    raise NotImplementedError\n'
    )
    fix = "import re\ndef parse_duration(text: str) -> int:\n    return int(re.match(r'(\\d+)s', text).group(1))"
    seen: list[Event] = []
    replies = [
        f"```bash\n{fix}\n```",
        "```bash\npython3 -c 'import durations; print(durations.parse_duration(\"45s\"))'\n```",
    ]
    Agent(ScriptedModel([*replies, "DONE: implemented"]), host, EventBus([seen.append])).run("implement it")
    finished = [e for e in seen if isinstance(e, CommandFinished)]
    assert [e.exit_code for e in finished] == [0, 0] and finished[-1].output == "45\n"
    text = (Path(host.workdir) / "durations.py").read_text()
    assert text.startswith('"""Durations."""') and "import re" in text and "NotImplementedError" not in text
    assert "def format_duration" in text  # spliced: the rest of the file kept
    started = [e for e in seen if type(e).__name__ == "CommandStarted"]
    assert any("held Python code, not shell commands" in note for note in started[0].notes)


def test_an_unnamed_python_block_runs_as_a_script(host):
    # Small models write data work as a Python block; quotes and EOF lines in it must survive.
    (Path(host.workdir) / "users.json").write_text('[{"id": 1, "name": "Ada"}, {"id": 2, "name": "Alan"}]')
    script = (
        "import csv, json\n"
        "users = json.load(open('users.json'))\n"
        "with open('users.csv', 'w', newline='') as f:\n"
        "    w = csv.writer(f)\n"
        "    w.writerow(['id', 'name'])\n"
        "    w.writerows([u['id'], u['name']] for u in users)\n"
        "print(\"EOF 'done'\")\n"
    )
    outcome, events = run([f"Convert it.\n```python\n{script}```", "DONE: converted"], host)
    assert outcome.status == "finished"
    finished = [e for e in events if isinstance(e, CommandFinished)]
    assert finished[0].exit_code == 0 and finished[0].output == "EOF 'done'\n"
    assert (Path(host.workdir) / "users.csv").read_text().splitlines() == ["id,name", "1,Ada", "2,Alan"]
    started = [e for e in events if type(e).__name__ == "CommandStarted"]
    assert "ran as a script" in started[0].notes[-1]


def test_an_unnamed_block_of_another_language_stays_a_format_error(host):
    outcome, events = run(["```javascript\nfunction brandNew() {}\n```\nDONE: added"], host)
    errors = [e.message for e in events if isinstance(e, FormatError)]
    assert errors and "no file name" in errors[0]
    assert outcome.status == "failed"


@pytest.mark.parametrize(
    "echo",
    [
        "[next: step 2 of your plan: Write]",  # the 1.5B answers the next-step note with that same line
        "```bash\n[next: step 2 of your plan: Write]\n```",  # reworded tasks: the note alone in its block
    ],
)
def test_a_reply_that_echoes_the_next_step_hint_is_sampled_afresh(host, echo: str):
    plan = "PLAN:\n1. Look\n2. Write\n```bash\nls\n```"
    model = ScriptedModel([plan, echo, "```bash\necho x > y.txt && cat y.txt\n```", "DONE: wrote y"])
    seen: list[Event] = []
    outcome = Agent(model, host, EventBus([seen.append])).run("write y")
    assert outcome.status == "finished" and outcome.steps == 3
    assert not [e for e in seen if isinstance(e, FormatError)]
    (asked_again,) = [e for e in seen if isinstance(e, ReplyAskedAgain)]
    assert asked_again.why == "echoed a note of agentcli's instead of replying" and asked_again.text == echo
    assert all(echo not in m["content"] for m in model.calls[-1] if m["role"] == "assistant")


def test_a_failing_test_rerun_with_new_timings_counts_as_the_same_output():
    detector = StuckDetector(repeats=3)
    for seconds in ("0.05", "0.07", "0.06"):
        detector.record("python3 -m pytest -q", f"1 failed, 2 passed in {seconds}s\n", 1)
    assert detector.check() == ("nudge", "repeat: the same command gave the same output 3 times in a row")


@pytest.mark.parametrize(
    ("command", "unchecked"),
    [
        ('echo "id,name,email" > data/users.csv', True),
        ("mv helpers/text.py helpers/util.py\nsed -i 's/a/b/' app.py", True),
        ("cat > f.py <<'EOF'\nprint(1)\nEOF", True),
        ("chmod +x run.sh", True),
        ("sed -i 's/a/b/' app.py && python3 app.py", False),
        ("python3 x.py > out.txt; cat out.txt", False),
        ("python3 -m pytest -q 2>&1", False),
        ("echo oops >&2", False),
        ("python3 - <<'EOF'\nopen('f', 'w').write('x')\nEOF", False),
    ],
)
def test_commands_that_only_change_files(command: str, unchecked: bool):
    assert only_changes(command) is unchecked


def test_done_right_after_a_write_is_questioned(host):
    plan = "PLAN:\n1. Write the header\n2. Write the rows\n3. Check the file\n"
    replies = [plan + "```bash\necho id > users.csv\n```", "DONE: plan completed.", "DONE: plan done."]
    outcome, events = run(replies, host)
    objections = [e.message for e in events if isinstance(e, FormatError)]
    assert "changed files but showed nothing" in objections[0]
    assert "Here is `cat -n users.csv`:\n[exit 0 · " in objections[0] and "     1\tid" in objections[0]  # shown
    assert len(objections) == 1 and outcome.status == "finished" and outcome.steps == 3  # insisting finishes


def test_each_observation_names_the_plan_step_due(host):
    plan = "PLAN:\n1. Look at the file\n2. Change it\n"
    replies = [plan + "```bash\nls\n```", "Oops.\n```bash\nfalse\n```", "Change.\n```bash\necho x > y.txt\n```"]
    model = ScriptedModel([*replies, "Check.\n```bash\ncat y.txt\n```", "DONE: changed"])
    Agent(model, host, EventBus()).run("change it")
    after = [call[-1]["content"].splitlines()[-1] for call in model.calls[1:4]]
    assert after[0] == "[next: step 2 of your plan: Change it]"
    assert after[1] == after[0]  # a failed command does not move the plan on
    assert "DONE: only when the whole task is done and checked" in after[2]  # every step has had its command


def test_with_next_step_off_each_observation_asks_for_the_reply_format_only(host):
    plan = "PLAN:\n1. Look at the file\n2. Change it\n"
    model = ScriptedModel([plan + "```bash\nls\n```", "DONE: changed"])
    Agent(model, host, EventBus(), policies=Policies(Policies.every().enabled - {"next-step"})).run("change it")
    after = model.calls[1][-1]["content"].splitlines()[-1]
    assert "step 2" not in after and "DONE: only when the whole task is done and checked" in after


def test_a_failing_command_completes_a_step_of_looking_but_not_one_of_changing(host):
    plan = "PLAN:\n1. Run the tests\n2. Fix the code\n3. Run the tests again\n"
    replies = [plan + "```bash\nfalse\n```", "Fix.\n```bash\nsed -i s/a/b/ missing.py\n```"]
    model = ScriptedModel([*replies, "DONE: fixed"])
    Agent(model, host, EventBus()).run("fix it")
    hints = [call[-1]["content"].splitlines()[-1] for call in model.calls[1:3]]
    assert hints[0].endswith("step 2 of your plan: Fix the code]")  # the failing test run was the step
    assert hints[1].endswith("step 2 of your plan: Fix the code]")  # the failed fix was not


def test_a_plan_written_again_unchanged_stays_out_of_the_history(host):
    plan = "PLAN:\n1. Look\n2. Write\n"
    replies = [plan + "```bash\nls\n```", plan + "Now write.\n```bash\necho x > y.txt && cat y.txt\n```"]
    model = ScriptedModel([*replies, "DONE: wrote y.txt"])
    Agent(model, host, EventBus()).run("write y")
    history = [m["content"] for m in model.calls[-1] if m["role"] == "assistant"]
    assert history[0].startswith("PLAN:") and history[1] == "Now write.\n```bash\necho x > y.txt && cat y.txt\n```"


def test_a_command_that_just_failed_is_not_run_again_unchanged(host):
    replies = ["```bash\nls no-such-file\n```", "Again.\n```bash\nls no-such-file\n```", "Other.\n```bash\nls\n```"]
    outcome, events = run([*replies, "DONE: listed"], host)
    assert [e.command for e in events if isinstance(e, CommandFinished)] == ["ls no-such-file", "ls"]
    refusal = next(e.message for e in events if isinstance(e, FormatError))
    assert "exact command just before and it failed (exit 2: ls: cannot access 'no-such-file'" in refusal
    assert outcome.status == "finished"


@pytest.mark.parametrize(
    ("command", "look"),
    [
        ("sed -i 's/a/b/' greet.py", "cat -n greet.py"),
        ("echo id,name > data/users.csv", "cat -n data/users.csv"),
        ("cat > app.py <<'EOF'\nprint(1)\nEOF", "cat -n app.py"),
        ("chmod +x scripts/run.py", "ls -l scripts/run.py"),
        ("rm old.txt", None),
        ("python3 -m pytest -q", None),
    ],
)
def test_the_check_suggested_after_a_change(command: str, look: str | None):
    assert check_command(command) == look


def test_a_model_that_only_resends_a_failed_command_is_stopped_as_stuck(host):
    # Refused once with a pointer to what to do instead; sent again, the run is stuck.
    replies = [f"```bash\nls no-such-file\n```\n{'.' * i}" for i in range(10)]
    outcome, events = run(replies, host, max_format_errors=3)
    assert outcome.status == "failed" and outcome.reason.startswith("stuck: the same failing command was sent again")
    assert len([e for e in events if isinstance(e, CommandFinished)]) == 1 and outcome.steps == 3


def test_a_sed_pattern_meant_as_plain_text_is_applied_as_plain_text(host):
    (Path(host.workdir) / "pager.py").write_text("def page(items, n):\n    return items[n * 3 : n * 3 + 3]\n")
    command = "sed -i 's/items[n * 3 : n * 3 + 3]/items[(n - 1) * 3 : n * 3]/' pager.py"
    model = ScriptedModel([f"```bash\n{command}\n```", "```bash\ncat pager.py\n```", "DONE: fixed"])
    Agent(model, host, EventBus()).run("fix page")
    assert (
        Path(host.workdir) / "pager.py"
    ).read_text() == "def page(items, n):\n    return items[(n - 1) * 3 : n * 3]\n"
    note = model.calls[1][-1]["content"]
    assert "occurs in pager.py as plain text, so it was replaced as plain text" in note
    assert "+    return items[(n - 1) * 3 : n * 3]" in note


def test_a_quoted_line_under_a_file_name_does_not_overwrite_the_file(host):
    code = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(5))
    (Path(host.workdir) / "calc.py").write_text(code)
    reply = "1. Open the `calc.py` file and find line 2:\n```python\n    return 0\n```\nThat is the bug."
    _, events = run([reply, "```bash\ncat calc.py\n```", "DONE: looked"], host)
    assert (Path(host.workdir) / "calc.py").read_text() == code
    refusal = next(e.message for e in events if isinstance(e, FormatError))
    assert "Your block for calc.py has 1 line but calc.py has 15" in refusal and "nothing was written" in refusal


def test_done_after_each_new_failing_command_is_questioned_again(host):
    replies = [
        "```bash\nls no-such-file\n```",
        "DONE: listed",
        "Try the other.\n```bash\nls other-missing-file\n```",
        "DONE: listed now",
        "DONE: really listed",
    ]
    outcome, events = run(replies, host)
    objections = [e.message for e in events if isinstance(e, FormatError)]
    assert len(objections) == 2 and all("Your last command failed (exit 2)" in o for o in objections)
    assert outcome.status == "finished" and outcome.summary == "really listed"  # insisting on one state is accepted


def test_a_one_line_python_script_that_cannot_parse_gets_the_python_block_advice(host):
    # With an `else`, where each part belongs is a guess: the one-liner is not repaired, only explained.
    command = "python3 -c \"import os; n = 0; for f in os.listdir('.'): n += 1; else: print(n)\""
    model = ScriptedModel([f"```bash\n{command}\n```", "DONE: counted"])
    Agent(model, host, EventBus()).run("count the files")
    observation = model.calls[1][-1]["content"]
    assert "SyntaxError" in observation
    assert "[note] In `python3 -c`, statements like for, if and with cannot follow `;`" in observation


def test_an_echo_over_a_file_of_several_lines_is_put_back_with_advice(host):
    ignore = Path(host.workdir) / ".gitignore"
    ignore.write_text("__pycache__/\n*.pyc\n")
    model = ScriptedModel(["```bash\necho debug.log > .gitignore\n```", "```bash\necho debug.log >> .gitignore\n```"])
    Agent(model, host, EventBus()).run("ignore debug.log")
    note = model.calls[1][-1]["content"]
    assert "`> .gitignore` replaced its 2 lines with 1, so .gitignore was put back as it was" in note
    assert "To add `debug.log` at the end of .gitignore: `echo debug.log >> .gitignore`" in note
    assert ignore.read_text() == "__pycache__/\n*.pyc\ndebug.log\n"  # the append that followed is kept


def test_a_file_filtered_into_itself_is_put_back(host):
    rows = "".join(f"{name},{name}@example.com\n" for name in ("ann", "bob", "ann"))
    contacts = Path(host.workdir) / "contacts.csv"
    contacts.write_text(rows)
    model = ScriptedModel(["```bash\nsort -u contacts.csv > contacts.csv\n```", "DONE: deduplicated"])
    Agent(model, host, EventBus()).run("dedupe contacts.csv")
    assert contacts.read_text() == rows
    note = model.calls[1][-1]["content"]
    assert "`> contacts.csv` left it empty" in note and "the shell empties contacts.csv before sort reads it" in note


def test_writes_that_keep_the_file_or_empty_it_on_purpose_stand(host):
    work = Path(host.workdir)
    (work / "VERSION").write_text("1.4.2\n")
    (work / "debug.log").write_text("one\ntwo\nthree\n")
    (work / "app.py").write_text("import sys\n\nprint(sys.argv)\n")
    rewrite = "cat > app.py <<'EOF'\nimport sys\n\nprint(sys.argv[1:])\nEOF"
    commands = ["echo 1.5.0 > VERSION", "> debug.log", rewrite, "echo done"]
    model = ScriptedModel([f"```bash\n{c}\n```" for c in commands] + ["DONE: all written"])
    Agent(model, host, EventBus()).run("write them")
    assert (work / "VERSION").read_text() == "1.5.0\n" and (work / "debug.log").read_text() == ""
    assert (work / "app.py").read_text() == "import sys\n\nprint(sys.argv[1:])\n"
    observations = [call[-1]["content"] for call in model.calls[1:]]
    assert len(observations) == 4 and not any("put back" in o for o in observations)


def test_an_interpreter_line_echoed_over_a_script_is_put_back_with_the_command_for_the_top(host):
    script = Path(host.workdir) / "count.py"
    script.write_text("import sys\n\nprint(len(sys.stdin.read()))\n")
    command = "sed -i '1i #!/usr/bin/env python3' count.py"
    model = ScriptedModel(["```bash\necho '#!/usr/bin/env python3' > count.py\n```", f"```bash\n{command}\n```"])
    Agent(model, host, EventBus()).run("make count.py executable")
    note = model.calls[1][-1]["content"]
    assert f"To put `#!/usr/bin/env python3` at the top of count.py: `{command}`." in note
    assert script.read_text() == "#!/usr/bin/env python3\nimport sys\n\nprint(len(sys.stdin.read()))\n"


def test_a_block_of_several_lines_does_as_many_steps_of_the_plan(host):
    plan = "PLAN:\n1. Make the folder.\n2. Write the note.\n3. List it.\n\n"
    block = "```bash\nmkdir notes\necho hi > notes/a.txt\nls notes\n```"
    model = ScriptedModel([plan + block, "DONE: wrote the note"])
    outcome = Agent(model, host, EventBus()).run("write a note")
    assert outcome.status == "finished"
    assert "of your plan" not in model.calls[1][-1]["content"]  # nor a next-step hint to redo it


def test_git_with_nothing_left_to_commit_is_no_failure(host):
    work = Path(host.workdir)
    (work / "a.txt").write_text("a\n")
    identity = "-c user.name=t -c user.email=t@example.com"
    setup = f"git init -q && echo .agentcli/ >> .git/info/exclude && git add a.txt && git {identity} commit -qm first"
    model = ScriptedModel(
        [f"```bash\n{setup}\n```", f"```bash\ngit {identity} commit -m again\n```", "DONE: committed"]
    )
    outcome = Agent(model, host, EventBus()).run("commit a.txt")
    observation = model.calls[2][-1]["content"]
    assert "nothing to commit, working tree clean" in observation
    assert "git had nothing to commit: every change is committed already, so this is no failure" in observation
    assert outcome.status == "finished"  # no "your last command failed" objection


def test_echo_lines_that_print_a_definition_one_file_has_become_its_edit(host):
    shapes = Path(host.workdir) / "shapes.py"
    shapes.write_text(
        "class Square:\n    def __init__(self, side):\n        self.side = side\n\n"
        "    def area(self):\n        return self.side**2\n"
    )
    lines = [
        "class Square:",
        "    def __init__(self, side):",
        "        if side <= 0:",
        "            raise ValueError('not positive')",
    ]
    lines.append("        self.side = side")
    block = "\n".join(f'echo "{line}"' for line in lines)
    model = ScriptedModel([f"```bash\n{block}\n```", "DONE: validated"])
    Agent(model, host, EventBus()).run("make Square reject sizes that are not positive")
    assert "        if side <= 0:\n            raise ValueError('not positive')\n" in shapes.read_text()
    assert "def area(self):" in shapes.read_text()
    assert (
        "Your echo lines only printed code, which writes no file. shapes.py defines Square"
        in model.calls[1][-1]["content"]
    )


def test_a_script_that_may_not_run_is_told_what_it_lacks_not_the_commands(host):
    (Path(host.workdir) / "count.py").write_text("print(1)\n")
    model = ScriptedModel(["```bash\n./count.py\n```", "DONE: ran"])
    Agent(model, host, EventBus()).run("make ./count.py run directly")
    observation = model.calls[1][-1]["content"]
    assert (
        "count.py is not executable and has no interpreter line (such as `#!/usr/bin/env python3`), which a script "
        "run directly needs first."
    ) in observation
    assert "chmod" not in observation


def test_a_python_script_run_directly_without_an_interpreter_line_gets_the_line(host):
    # make-script-executable: after `chmod +x`, bash read the Python script as shell.
    script = Path(host.workdir) / "count.py"
    script.write_text('"""Count."""\n\nimport sys\n\nprint(len(sys.argv))\n')
    script.chmod(0o755)
    model = ScriptedModel(["```bash\n./count.py\n```", "DONE: ran"])
    Agent(model, host, EventBus()).run("make ./count.py run directly")
    observation = model.calls[1][-1]["content"]
    assert "import: command not found" in observation and "is not executable" not in observation
    assert (
        "count.py has no interpreter line (such as `#!/usr/bin/env python3`), which a script run directly needs first."
    ) in observation


def test_a_python_file_rewritten_one_echo_at_a_time_is_spliced_as_a_block(host):
    greet = Path(host.workdir) / "greet.py"
    original = (
        '"""Greet."""\n\nimport sys\n\n\ndef greeting(name):\n    return f"Hello, {name}!"\n\n\n'
        'def main():\n    print(greeting(sys.argv[1]))\n\n\nif __name__ == "__main__":\n    main()\n'
    )
    greet.write_text(original)
    lines = [
        "def greeting(name):",
        '    return f\\"Hello, {name.upper()}!\\"',
        'if __name__ == \\"__main__\\":\\n    main()',
    ]
    block = f'echo "{lines[0]}" > greet.py\n' + "".join(f'echo "{line}" >> greet.py\n' for line in lines[1:])
    model = ScriptedModel([f"```bash\n{block}```", "DONE: shouting"])
    Agent(model, host, EventBus()).run("greet in upper case")
    assert greet.read_text() == original.replace("{name}!", "{name.upper()}!")
    assert "Your echo lines were taken as a block for greet.py" in model.calls[1][-1]["content"]


def test_a_fixed_function_shown_before_the_tests_command_is_placed_and_then_the_tests_run(host):
    (Path(host.workdir) / "calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    reply = (
        "Here is the fixed function:\n```python\ndef add(a, b):\n    return a + b\n```\n"
        "Now run it:\n```bash\npython3 -c 'import calc; print(calc.add(2, 3))'\n```"
    )
    model = ScriptedModel([reply, "DONE: fixed"])
    Agent(model, host, EventBus()).run("fix add")
    assert (Path(host.workdir) / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")
    observation = model.calls[1][-1]["content"]
    assert (
        "[exit 0" in observation and "\n5\n" in observation and "calc.py defines add, so it went there" in observation
    )


def test_code_no_file_defines_beside_a_command_is_not_run(host):
    reply = "For example:\n```python\nprint('side effect')\n```\n```bash\necho ran\n```"
    model = ScriptedModel([reply, "DONE: ran"])
    Agent(model, host, EventBus()).run("say it")
    observation = model.calls[1][-1]["content"]
    assert "ran" in observation and "side effect" not in observation


def test_a_python_script_that_ran_completes_the_plan(host):
    (Path(host.workdir) / "rows.csv").write_text("a\na\nb\n")
    plan = "PLAN:\n1. Read rows.csv.\n2. Drop repeated rows.\n3. Write rows.csv back.\n"
    script = "```python\nrows = open('rows.csv').read().splitlines()\nopen('rows.csv', 'w').write('a\\nb\\n')\n```"
    model = ScriptedModel([plan + script, "DONE: deduplicated"])
    outcome = Agent(model, host, EventBus()).run("dedupe rows.csv")
    assert outcome.status == "finished" and "of your plan" not in model.calls[1][-1]["content"]


def test_an_install_that_finds_no_network_is_explained_and_not_tried_again(host):
    offline_pip = "pip() { echo 'ERROR: No matching distribution found for pyyaml' >&2; return 1; }"
    replies = [f"```bash\n{offline_pip}\n```", "```bash\npip install pyyaml\n```"]
    replies += ["```bash\npython3 -m pip install pyyaml==6.0\n```", "```bash\necho ok > f.txt && cat f.txt\n```"]
    seen: list[Event] = []
    Agent(ScriptedModel([*replies, "DONE: wrote f.txt"]), host, EventBus([seen.append])).run("make the report work")
    ran = [e.command for e in seen if isinstance(e, CommandFinished)]
    assert ran == [offline_pip, "pip install pyyaml", "echo ok > f.txt && cat f.txt"]
    refusals = [e.message for e in seen if isinstance(e, FormatError)]
    assert len(refusals) == 1 and refusals[0].startswith("Not run: There is no network here")


def test_an_echo_whose_quotes_do_not_close_gets_the_way_to_write_a_file(host):
    # write-missing-test: `echo "import pytest` and the tests, with a `"` inside that ends the quote early.
    broken = 'echo "import pytest\ndef test_it():\n    assert f("a") == 1\n# Run the tests\npython3 -m pytest'
    model = ScriptedModel([f"```bash\n{broken}\n```", "DONE: wrote it"])
    Agent(model, host, EventBus()).run("write tests/test_x.py")
    observation = model.calls[1][-1]["content"]
    assert "[syntax error" in observation and "The quotes of your echo do not close." in observation


def test_a_server_started_in_the_foreground_is_stopped_soon_and_is_no_failure(host):
    # env-port-default: `python3 server.py` waited 92 s of the task's 300 for a server that never ends.
    work = Path(host.workdir)
    (work / "server.py").write_text(
        "from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer\n\n"
        "with ThreadingHTTPServer(('127.0.0.1', 0), SimpleHTTPRequestHandler) as httpd:\n"
        "    print('serving', flush=True)\n"
        "    httpd.serve_forever()\n"
    )
    seen: list[Event] = []
    start = 'if [ -n "$PORT" ]; then\n    export PORT=$PORT\nfi\n\npython3 server.py'  # as the 1.5B wrote it
    model = ScriptedModel([f"```bash\n{start}\n```", "DONE: it serves"])
    outcome = Agent(model, host, EventBus([seen.append]), limits=RunLimits(timeout=300)).run("run the server")
    finished = [e for e in seen if isinstance(e, CommandFinished)]
    assert len(finished) == 1 and finished[0].timed_out and finished[0].duration < 20
    assert "serving" in finished[0].output
    assert "server.py is a server: it was still serving when stopped after" in model.calls[1][-1]["content"]
    assert outcome.status == "finished" and not [e for e in seen if isinstance(e, FormatError)]


def test_a_done_that_copies_agentclis_objection_is_no_finish(host):
    # git-branch-commit: told nothing had changed, the 1.5B answered "DONE: No file in the repository has
    # changed yet, so the task is not done. ...", which a second DONE facing the objection would finish.
    replies = [
        "```bash\nls\n```",
        "DONE: created the branch",
        "DONE: No file in the repository has changed yet, so the task is not done. Continue with the next command.",
        "DONE: Your DONE line only repeats what agentcli told you, so the task is not done: Not done yet",
        "```bash\necho fixed > README.md && cat README.md\n```",
        "DONE: fixed the typo",
    ]
    seen: list[Event] = []
    agent = Agent(ScriptedModel(replies), host, EventBus([seen.append]))
    unchanged = "No file in the repository has changed yet, so the task is not done."
    readme = Path(host.workdir) / "README.md"
    agent.ctx.finish_checks = [DoneCheck("unchanged", lambda: None if readme.exists() else unchanged, code=True)]
    outcome = agent.run("fix the typo")
    errors = [e.message for e in seen if isinstance(e, FormatError)]
    assert errors[0] == f"Not done yet: {unchanged} Continue with the next command."
    assert errors[1] == f"Your DONE line only repeats what agentcli told you, so the task is not done: {errors[0]}"
    assert errors[2] == errors[1]  # a copy of that answer is told the first message again, not nested in it
    assert outcome.status == "finished" and outcome.summary == "fixed the typo"


def test_done_lines_that_keep_copying_agentclis_answer_end_the_attempt_as_stuck(host):
    # make-script-executable: each "Your DONE line only repeats ..." answered by a DONE copying it, 4 times.
    copied = "DONE: Your DONE line only repeats what agentcli told you, so the task is not done: Not done yet"
    objection = "DONE: No file in the repository has changed yet, so the task is not done."
    again = copied.removesuffix(": Not done yet")  # a reply sent twice alike is asked for again, not read
    replies = ["```bash\nls\n```", "DONE: fixed", objection, copied, again, "```bash\necho never asked\n```"]
    agent = Agent(ScriptedModel(replies), host, EventBus())
    unchanged = "No file in the repository has changed yet, so the task is not done."
    agent.ctx.finish_checks = [DoneCheck("unchanged", lambda: unchanged, code=True)]
    outcome = agent.run("fix the typo")
    assert outcome.status == "failed"
    assert outcome.reason == "stuck: 3 DONE lines in a row copied what agentcli said"
    assert outcome.steps == 5  # the objection copied, then agentcli's answer twice: the third copy in a row ends it


def test_a_done_copying_agentcli_is_followed_by_a_begun_command(host):
    unchanged = "No file in the repository has changed yet, so the task is not done."
    replies = ["```bash\nls\n```", "DONE: fixed", f"DONE: {unchanged}", "touch README.md && ls\n```", "DONE: x"]
    model = ScriptedModel(replies, continues_replies=True)
    agent = Agent(model, host, EventBus())
    readme = Path(host.workdir) / "README.md"
    agent.ctx.finish_checks = [DoneCheck("unchanged", lambda: None if readme.exists() else unchanged, code=True)]
    outcome = agent.run("fix the typo")
    assert model.prefixes == ["", "", "", "```bash\n", ""]
    assert outcome.status == "finished" and readme.exists()


def test_an_output_just_seen_is_not_shown_again_in_full(host, tmp_path: Path):
    # implement-from-docstring: `cat durations.py` three times, 30 lines each, until the attempt ended stuck.
    body = "".join(f"def f{i}():\n    return {i}\n" for i in range(30))
    (tmp_path / "funcs.py").write_text(body)
    replies = [
        "```bash\ncat funcs.py\n```",
        "Read it again.\n```bash\ncat funcs.py\n```",
        "```bash\necho 'X = 1' >> funcs.py\n```",
        "Now look.\n```bash\ncat funcs.py\n```",
        "DONE: added X",
    ]
    model = ScriptedModel(replies)
    Agent(model, host, EventBus()).run("add X to funcs.py")
    first, again, after_change = (model.calls[i][-1]["content"] for i in (1, 2, 4))
    assert "def f29():" in first
    assert "def f29():" not in again and "(the same 60 lines as at step 1, above)" in again
    assert "If funcs.py needs a change, write the path funcs.py on a line, then a fenced block" in again
    assert "def f29():" in after_change and "X = 1" in after_change  # changed: shown in full


def test_an_echo_of_test_code_goes_to_the_test_file_the_task_asks_for(host, tmp_path: Path):
    (tmp_path / "stats.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "tests").mkdir()
    echo = 'echo "from stats import double\ndef test_double():\n    assert double("ab") == "abab"\n# Run\nls tests'
    model = ScriptedModel([f"```bash\n{echo}\n```", "DONE: tested"])
    agent = Agent(model, host, EventBus())
    agent.ctx.facts.asked_files = ["tests/test_stats.py"]
    agent.run("Write tests for double in tests/test_stats.py")
    written = (tmp_path / "tests" / "test_stats.py").read_text()
    assert written == 'from stats import double\ndef test_double():\n    assert double("ab") == "abab"\n'
    observation = model.calls[1][-1]["content"]
    assert "test_stats.py" in observation.split("[note]")[0]  # `ls tests` ran after the write
    assert "Your echo of Python code was taken as a block for tests/test_stats.py" in observation
    # The task's wording chose that file: with the policy that reads it off, no file is.
    (tmp_path / "tests" / "test_stats.py").unlink()
    off = Policies(Policies.every().enabled - {"asked-file"})
    agent = Agent(ScriptedModel([f"```bash\n{echo}\n```", "DONE: tested"]), host, EventBus(), policies=off)
    agent.ctx.facts.asked_files = ["tests/test_stats.py"]
    agent.run("Write tests for double in tests/test_stats.py")
    assert not (tmp_path / "tests" / "test_stats.py").exists()


def test_a_failing_test_in_a_task_that_writes_none_still_points_to_the_code(host, tmp_path: Path):
    (tmp_path / "stats.py").write_text("def double(x):\n    return x + 1\n")
    (tmp_path / "test_stats.py").write_text(
        "from stats import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    )
    model = ScriptedModel(["```bash\npython3 -m pytest -q\n```", "DONE: x"])
    Agent(model, host, EventBus()).run("fix the failing test")
    observation = model.calls[1][-1]["content"]
    assert "calls double, defined in stats.py" in observation and "with the code as it is" not in observation


def test_a_look_at_the_code_to_change_ends_with_the_way_to_send_the_change(host, tmp_path: Path):
    from agentcli.agent.first_look import lines_look

    (tmp_path / "durations.py").write_text("def parse_duration(text):\n    raise NotImplementedError\n")
    model = ScriptedModel(["DONE: nothing"])
    agent = Agent(model, host, EventBus(), limits=RunLimits(max_steps=1))
    agent.run("Implement parse_duration", first_looks=[lines_look("durations.py", 1, 2)])
    task_message = model.calls[0][-1]["content"]
    assert "     1\tdef parse_duration(text):" in task_message
    assert "The change can be your first reply: the path durations.py on a line, then a fenced block" in task_message


def test_a_first_look_sent_again_as_the_first_reply_is_not_shown_again_in_full(host, tmp_path: Path):
    from agentcli.agent.first_look import lines_look

    (tmp_path / "funcs.py").write_text("".join(f"def f{i}():\n    return {i}\n" for i in range(30)))
    look = lines_look("funcs.py", 1, 60)
    model = ScriptedModel([f"```bash\n{look}\n```", "DONE: x"])
    Agent(model, host, EventBus(), limits=RunLimits(max_steps=2)).run("change f29", first_looks=[look])
    assert "def f29" in model.calls[0][-1]["content"]
    again = model.calls[1][-1]["content"]
    assert "def f29" not in again and "(the same 60 lines as before your first reply, above)" in again


def test_an_append_that_leaves_a_python_file_unparsable_is_put_back(host, tmp_path: Path):
    # add-config-key: `echo "def dsn(settings: dict, timeout: int = 30) -> str:" >> db.py`.
    db = tmp_path / "db.py"
    db.write_text("def dsn(settings):\n    return 'x'\n")
    appends = ["echo 'def dsn(settings, timeout):' >> db.py", "echo 'X = 1' >> db.py"]
    model = ScriptedModel([f"```bash\n{append}\n```" for append in appends])
    Agent(model, host, EventBus(), limits=RunLimits(max_steps=2)).run("add a timeout")
    observation = model.calls[1][-1]["content"]
    assert "`>> db.py` left db.py unable to parse (SyntaxError: expected an indented block" in observation
    assert "so db.py was put back as it was" in observation
    assert db.read_text() == "def dsn(settings):\n    return 'x'\n" + "X = 1\n"  # an append that parses stands


def test_the_definition_shown_first_begins_the_first_reply_with_its_change(host, tmp_path: Path):
    # implement-from-docstring: shown parse_duration, the model answered every plan step with `cat`.
    from agentcli.agent.first_look import lines_look

    source = (
        "def double(n: int) -> int:\n    return 2 * n\n\n\n"
        'def parse_duration(text: str) -> int:\n    """Seconds in "1h30m".\n\n'
        + "".join(f"    Rule {i} of the format, in words.\n" for i in range(8))
        + '    """\n    raise NotImplementedError\n'
    )
    durations = tmp_path / "durations.py"
    durations.write_text(source)
    look = lines_look("durations.py", 5, 16)
    body = "    hours, minutes = text.split('h')\n    return int(hours) * 3600\n```"
    model = ScriptedModel([body, "DONE: x"], continues_replies=True)
    seen: list[Event] = []
    Agent(model, host, EventBus([seen.append]), limits=RunLimits(max_steps=1)).run(
        "Implement parse_duration", first_looks=[look]
    )
    definition = source.split("\n\n\n")[1].removesuffix("    raise NotImplementedError\n")
    head = "durations.py\n```python\n" + definition
    assert model.prefixes == [head]
    replied = [e.text for e in seen if isinstance(e, ModelReplied)]
    assert replied[0] == head + body  # the reply as the model's own, prefix included
    assert durations.read_text() == source.replace(
        "    raise NotImplementedError\n", "    hours, minutes = text.split('h')\n    return int(hours) * 3600\n"
    )


def test_a_reply_is_begun_only_for_a_model_that_continues_replies_and_a_source_file(host, tmp_path: Path):
    (tmp_path / "app.py").write_text("".join(f"X{i} = {i}\n" for i in range(40)))
    (tmp_path / "data.json").write_text("[" + ", ".join(str(i) for i in range(100)) + "]\n")
    for command, continues, begun in [
        ("cat app.py", True, "app.py\n```python\n"),
        ("cat app.py", False, ""),
        ("cat data.json", True, ""),  # an input, not code to change
    ]:
        replies = [f"Read it{'again' * i}.\n```bash\n{command}\n```" for i in range(3)]
        model = ScriptedModel(replies, continues_replies=continues)
        Agent(model, host, EventBus(), limits=RunLimits(max_steps=3)).run("change it")
        assert model.prefixes == ["", "", begun], command


def test_an_objection_that_offers_a_command_begins_the_next_reply_with_a_bash_block(host):
    # git-untrack-file: offered `echo debug.log >> .gitignore && ...`, the 1.5B said DONE again, twice.
    offered = "To have git ignore debug.log: `echo debug.log >> .gitignore && git add .gitignore`."
    gitignore = Path(host.workdir) / ".gitignore"
    replies = ["```bash\nls\n```", "DONE: untracked", "echo debug.log >> .gitignore && cat .gitignore\n```", "DONE: x"]
    model = ScriptedModel(replies, continues_replies=True)
    agent = Agent(model, host, EventBus())
    agent.ctx.finish_checks = [DoneCheck("ignored", lambda: None if gitignore.exists() else offered)]
    outcome = agent.run("untrack debug.log")
    assert model.prefixes == ["", "", "```bash\n", ""]
    assert outcome.status == "finished" and gitignore.read_text() == "debug.log\n"
    # An objection without a command to send leaves the reply to the model.
    model = ScriptedModel(["```bash\nls\n```", "DONE: x", "DONE: y"], continues_replies=True)
    agent = Agent(model, host, EventBus())
    agent.ctx.finish_checks = [DoneCheck("tests", lambda: "the tests fail.", code=True)]
    agent.run("fix it")
    assert model.prefixes == ["", "", ""]


def test_a_failing_command_sent_again_begins_the_fix_of_the_function_it_failed_in(host, tmp_path: Path):
    app = tmp_path / "app.py"
    app.write_text("def half(x):\n    return x / 0\n\n\nprint(half(4))\n")
    again = ["Run it.\n```bash\npython3 app.py\n```", "Run it again.\n```bash\npython3 app.py\n```"]
    replies = [*again, "    return x / 2\n```", "DONE: x"]
    model = ScriptedModel(replies, continues_replies=True)
    Agent(model, host, EventBus(), limits=RunLimits(max_steps=3)).run("make app.py print half of 4")
    assert model.prefixes == ["", "", "app.py\n```python\ndef half(x):\n"]
    assert app.read_text() == "def half(x):\n    return x / 2\n\n\nprint(half(4))\n"


def test_an_objection_the_code_answers_begins_the_change_of_the_definition_shown_first(host, tmp_path: Path):
    # validate-input: told that Rectangle('3', '3') raises TypeError, with the check to add, the 1.5B said DONE.
    from agentcli.agent.first_look import lines_look

    geometry = tmp_path / "geometry.py"
    geometry.write_text(
        'class Rectangle:\n    """A rectangle."""\n\n    def __init__(self, width):\n        self.width = width\n'
    )
    look = lines_look("geometry.py", 1, 5)
    first = "    def __init__(self, width):\n        if width <= 0:\n            raise ValueError(width)\n"
    first += "        self.width = width\n```"
    check = "```bash\npython3 -c 'import geometry'\n```"
    fix = "    def __init__(self, width):\n        self.width = float(width)\n```"
    model = ScriptedModel([first, check, "DONE: checked", fix], continues_replies=True)
    agent = Agent(model, host, EventBus(), limits=RunLimits(max_steps=4))
    agent.ctx.finish_checks = [DoneCheck("examples", lambda: "`Rectangle(width='3')` raises TypeError", code=True)]
    agent.run("Make Rectangle raise ValueError", first_looks=[look])
    head = 'geometry.py\n```python\nclass Rectangle:\n    """A rectangle."""\n\n'
    assert model.prefixes == [head, "", "", head]
    assert "float(width)" in geometry.read_text()
