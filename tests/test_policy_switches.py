"""Each policy, one scenario: with the policy on the agent does what its `why` says; switched off, not.

The loop runs with the scripted model in a real host sandbox in a temporary folder; what a policy did
shows as a verdict (a refused command or an objection), a note on a command, or the file it kept; and
each run that it changed records a `policy_fired` event of its name, which a run with it off never does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.events import (
    CommandStarted,
    Event,
    EventBus,
    FormatError,
    ModelPrompt,
    Notice,
    Nudge,
    PolicyFired,
    ReplyAskedAgain,
)
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, committed_repo
from tests.test_solve import agentcli


@dataclass
class Scenario:
    policy: str
    task: str
    replies: list[str]
    files: dict[str, str] = field(default_factory=dict)
    git: bool = False  # a git repository with everything committed
    continues: bool = False  # the model goes on from a reply begun for it (as llama.cpp does)
    command_timeout: float = 120.0


def bash(command: str) -> str:
    return f"```bash\n{command}\n```"


SCENARIOS = [
    Scenario("failed", "make it", [bash("false"), "DONE: made"]),
    Scenario("unchecked", "make it", [bash("echo 1 > a.txt"), "DONE: made"]),
    Scenario("repeat-refusal", "make it", [bash("ls missing-dir"), "Again.\n" + bash("ls missing-dir"), "DONE: no"]),
    Scenario("lossy-overwrite", "make it", [bash("echo x > notes.txt"), "DONE: ok"], {"notes.txt": "a\nb\nc\n"}),
    Scenario(
        "broken-append",
        "fix it",
        [bash("echo 'def f(:' >> mod.py"), "DONE: ok"],
        {"mod.py": "def g():\n    return 1\n"},
    ),
    Scenario("echo-as-block", "write it", [bash("echo 'import os' > m.py\necho 'print(os.sep)' >> m.py"), "DONE: ok"]),
    Scenario("echoed-reply", "make it", [bash("echo a"), "[exit 0 · 0.0s]\na", "DONE: ok", "DONE: ok"]),
    Scenario(
        "echoed-done",
        "make it",
        [bash("false"), "DONE: made", "DONE: Not done yet: Your last command failed (exit 1). Continue.", "DONE"],
    ),
    Scenario("stuck", "make it", [f"Look {i}.\n" + bash("ls") for i in range(8)] + ["DONE: no"]),
    Scenario("failure-advice", "run it", [bash("./count.py"), "DONE: ran"], {"count.py": "print(1)\n"}),
    Scenario(
        "failure-focus", "fix it", [bash("python3 x.py"), "DONE"], {"x.py": "def f():\n    return 1 / 0\n\n\nf()\n"}
    ),
    Scenario(
        "repeat-output",
        "look",
        [bash("cat a.txt"), "Again.\n" + bash("cat a.txt"), "DONE"],
        {"a.txt": "".join(f"line {i}\n" for i in range(60))},
    ),
    Scenario(
        "nothing-to-commit", "commit it", [bash("git commit -qm again"), "DONE: committed"], {"a.txt": "1\n"}, git=True
    ),
    Scenario(
        "step-done",
        "make a and b",
        [
            "1. Make a.\n2. Make b.\n" + bash("echo a > a.txt && cat a.txt"),
            "DONE: Plan 1 completed. Now, let's make b",
            "DONE",
        ],
    ),
    Scenario(
        "server-stop",
        "run it",
        [bash("python3 serve.py"), "DONE: ran"],
        {"serve.py": "import time\n\n\ndef app():\n    pass\n\n\n# app.run(port=0)\ntime.sleep(30)\n"},
        command_timeout=2,
    ),
    Scenario(
        "offline-install",
        "install it",
        [bash("pip install --no-index no-such-package-here"), bash("pip install --no-index other-package"), "DONE"],
    ),
    Scenario(
        "literal-heredoc",
        "write it",
        [bash('cat > hi.sh <<EOF\necho "hi $1"\nEOF\nbash hi.sh you'), "DONE: wrote hi.sh"],
    ),
    Scenario("next-step", "make it", ["1. Look.\n2. Make it.\n" + bash("ls"), "DONE: made"]),
    Scenario(
        "begun-replies",
        "fix it",
        [bash("python3 x.py"), "Again.\n" + bash("python3 x.py"), "    return 2\n```", "DONE"],
        {"x.py": "def f():\n    return 1 / 0\n\n\nf()\n"},
        continues=True,
    ),
]


def run(scenario: Scenario, tmp_path: Path, on: bool) -> list[Event]:
    root = tmp_path / ("on" if on else "off")
    if scenario.git:
        committed_repo(root, scenario.files)
    else:
        root.mkdir()
        for name, text in scenario.files.items():
            (root / name).write_text(text)
    seen: list[Event] = []
    policies = Policies.chosen("small-local", [] if on else [f"{scenario.policy}=off"])
    policies.on_fired = lambda name: seen.append(PolicyFired(name=name))
    with HostSandbox(root, channel_for(root)) as box:
        agent = Agent(
            ScriptedModel(scenario.replies, continues_replies=scenario.continues),
            box,
            EventBus([seen.append]),
            limits=RunLimits(command_timeout=scenario.command_timeout),
            policies=policies,
        )
        agent.run(scenario.task)
    return seen


def acted(scenario: Scenario, events: list[Event], root: Path) -> bool:
    """Whether the policy left a trace: a verdict, a note, a rewritten command, or a file kept."""
    told = " ".join(e.message for e in events if isinstance(e, FormatError))
    notes = " ".join(" ".join(e.notes) for e in events if isinstance(e, CommandStarted))
    shown = " ".join(m["content"] for e in events if isinstance(e, ModelPrompt) for m in e.messages)
    checks: dict[str, Callable[[], bool]] = {
        "failed": lambda: "last command failed" in told,
        "unchecked": lambda: "showed nothing of the result" in told,
        "repeat-refusal": lambda: "exact command just before" in told,
        "lossy-overwrite": lambda: (root / "notes.txt").read_text() == "a\nb\nc\n",
        "broken-append": lambda: (root / "mod.py").read_text() == "def g():\n    return 1\n",
        "echo-as-block": lambda: "taken as a block" in notes,
        "echoed-reply": lambda: any(isinstance(e, ReplyAskedAgain) and "echoed" in e.why for e in events),
        "echoed-done": lambda: "only repeats what agentcli told you" in told,
        "stuck": lambda: any(isinstance(e, Nudge) for e in events),
        "failure-advice": lambda: "count.py is not executable" in shown,
        "failure-focus": lambda: "The error comes from x.py line 2" in shown,
        "repeat-output": lambda: "This printed exactly what it printed" in shown,
        "nothing-to-commit": lambda: "git had nothing to commit" in shown,
        "step-done": lambda: "ends the whole task, not one step of it" in told,
        "next-step": lambda: "[next: step 2 of your plan: Make it]" in shown,
        "server-stop": lambda: "serve.py is a server" in shown,
        "offline-install": lambda: "There is no network here" in shown,
        "literal-heredoc": lambda: (root / "hi.sh").read_text() == 'echo "hi $1"\n',
        "begun-replies": lambda: any(
            isinstance(e, Notice) and "the reply begins with a change" in e.message for e in events
        ),
    }
    return checks[scenario.policy]()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.policy for s in SCENARIOS])
def test_policy_acts_only_when_on(scenario: Scenario, tmp_path: Path):
    on, off = run(scenario, tmp_path, on=True), run(scenario, tmp_path, on=False)
    assert acted(scenario, on, tmp_path / "on"), "on: the policy did nothing"
    assert not acted(scenario, off, tmp_path / "off"), "off: the policy still acted"
    assert PolicyFired(name=scenario.policy) in on, "on: it acted and its firing was not recorded"
    assert PolicyFired(name=scenario.policy) not in off


def fired(events: list[dict], policy: str) -> bool:
    """Whether a run's JSON events record `policy` firing."""
    return {"type": "policy_fired", "name": policy} in [{k: e.get(k) for k in ("type", "name")} for e in events]


# The session's checks on done, through `agentcli solve` with a scripted model that says DONE too soon.
SESSION_SCENARIOS = [
    ("unchanged", "Make greet.py greet in French.", {"greet.py": "print('hello')\n"}, "cat greet.py"),
    (
        "syntax",
        "Make greet.py greet in French.",
        {"greet.py": "print('hello')\n"},
        "sed -i 's/print(/print((/' greet.py",
    ),
    (
        "shell-syntax",
        "Make greet.sh greet in French.",
        {"greet.sh": "echo hello\n"},
        "echo 'if true; then' >> greet.sh && cat greet.sh",
    ),
    (
        "data-syntax",
        "Add a retry count to config.json.",
        {"config.json": '{"timeout": 5}\n'},
        """echo '{"retries": 3}' >> config.json""",
    ),
    ("empty", "Add a CONTRIBUTING.md.", {"greet.py": "print('hello')\n"}, "touch CONTRIBUTING.md"),
    ("staged", "Tidy greet.py.", {"greet.py": "print('hello')\n"}, "echo '# tidy' >> greet.py && git add greet.py"),
    (
        "examples",
        "Make double in calc.py work.",
        {"calc.py": 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x\n'},
        "echo '# looked' >> calc.py",
    ),
]


def _solve_events(repo: Path, task: str, replies: list[str], write_replies, *switches: str) -> list[dict]:
    result = agentcli(
        "solve", task, "--model", write_replies(replies), "--sandbox", "host", "--json", *switches, cwd=repo
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize(
    ("policy", "task", "files", "command"), SESSION_SCENARIOS, ids=[s[0] for s in SESSION_SCENARIOS]
)
def test_session_check_objects_only_when_on(policy, task, files, command, tmp_path, write_replies):
    for on in (True, False):
        repo = committed_repo(tmp_path / ("on" if on else "off"), files)
        replies = [bash(command), "DONE: done.", "DONE: done, really."]
        switches = ["--policy", "retries=off"] + ([] if on else ["--policy", f"{policy}=off"])
        events = _solve_events(repo, task, replies, write_replies, *switches)
        verdicts = [e.get("verdict") for e in events]
        assert (f"objection ({policy})" in verdicts) == on, (on, verdicts)
        assert fired(events, policy) == on


@pytest.mark.parametrize("on", [True, False])
def test_retries_only_when_on(on, tmp_path, write_replies):
    repo = committed_repo(tmp_path / "repo", {"greet.py": "print('hello')\n"})
    replies = [bash("cat greet.py"), "DONE: it greets", "DONE: it greets.", bash("cat greet.py"), "DONE", "DONE."]
    switches = [] if on else ["--policy", "retries=off"]
    events = _solve_events(repo, "Make greet.py greet in French.", replies, write_replies, *switches)
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("tried afresh" in n for n in notices) == on, notices
    assert fired(events, "retries") == on


# What the session shows or begins before the first reply, through `agentcli solve` (with a model that
# goes on from a begun reply, as llama.cpp does).
FIRST_STEP_SCENARIOS = [
    (
        "named-code",
        "Make `double` in calc.py return twice its argument.",
        {"calc.py": "def double(x):\n    return x\n"},
        lambda events: any(e["type"] == "command_started" and e["step"] == 0 for e in events),
    ),
    (
        "first-change",
        "Make `double` in calc.py return twice its argument.",
        {"calc.py": "def double(x):\n    return x\n"},
        lambda events: any(
            e["type"] == "model_replied" and e["step"] == 1 and e["text"].startswith("calc.py\n```python\ndef double")
            for e in events
        ),
    ),
]


@pytest.mark.parametrize(
    ("policy", "task", "files", "acted_on"), FIRST_STEP_SCENARIOS, ids=[s[0] for s in FIRST_STEP_SCENARIOS]
)
def test_first_step_policy_acts_only_when_on(policy, task, files, acted_on, tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"replies": ["print(1)\n```", "DONE: done."], "continues_replies": True}))
    for on in (True, False):
        repo = committed_repo(tmp_path / ("on" if on else "off"), files)
        switches = ["--policy", "retries=off"] + ([] if on else ["--policy", f"{policy}=off"])
        result = agentcli(
            "solve", task, "--model", f"scripted:{replies}", "--sandbox", "host", "--json", *switches, cwd=repo
        )
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert acted_on(events) == on, (on, [e for e in events if e["type"] in ("command_started", "model_replied")])
        assert fired(events, policy) == on


def test_every_policy_has_a_switch_test():
    from agentcli.policies import BY_NAME

    # Tested on their own above; reply-grammar, note-copies, action-due, tests, select, failing-before,
    # asked-file, changes-shown and missing-import in test_reply_grammar (the first three),
    # test_policies, test_selection, test_solve, test_loop, test_changes_shown and test_missing_import.
    apart = {"retries", "reply-grammar", "tests", "select", "failing-before", "asked-file", "changes-shown"}
    apart |= {"missing-import", "note-copies", "action-due"}
    covered = {s.policy for s in SCENARIOS} | {s[0] for s in SESSION_SCENARIOS}
    covered |= {s[0] for s in FIRST_STEP_SCENARIOS} | apart
    assert covered == set(BY_NAME)
