"""The context window: budgets over long sessions, compaction, the digest fallback, overflow recovery.

Sessions run through the real loop and a real host sandbox with scripted replies; summaries come
from real `Model` backends (scripted, or LiteLLM against an endpoint that refuses).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.agent.parsing import reply_gist
from agentcli.context.digest import Digest, files_written
from agentcli.context.summary import ModelSummarizer, SummaryRequest
from agentcli.context.tokens import TokenCounter, model_window, tiktoken_count
from agentcli.context.window import MIN_STEP_ROOM, ContextWindow, build_context
from agentcli.errors import UsageError
from agentcli.events import ContextCompacted, Event, EventBus, ModelReplied
from agentcli.models.base import ContextLengthExceeded, Message, Reply
from agentcli.models.scripted import ScriptedModel
from agentcli.prompts import render
from agentcli.sandbox.local import HostSandbox
from tests.conftest import git

SYSTEM = render("system", workdir="/work")
REPLY_TOKENS = 256


def session_replies(steps: int) -> list[str]:
    """A long session: a plan, commands with outputs of every size, some failures, then DONE."""
    replies = [
        "PLAN:\n1. Find the service settings.\n2. Fix the health check.\n3. Run the tests.\n\n"
        "```bash\nprintf 'service: api\\nport = 48213\\n' > settings.ini && cat settings.ini\n```"
    ]
    for i in range(1, steps - 1):
        kind = i % 7
        if kind == 0:
            command = f"seq 1 {20 + i * 13 % 600}"
        elif kind == 1:
            command = f"echo 'step {i}' >> notes.txt && wc -l notes.txt"
        elif kind == 2:
            command = f"ls nosuchdir{i}"  # fails
        elif kind == 3:
            command = f"python3 -c \"print('x' * {i * 40 % 3000})\""
        elif kind == 4:
            command = "seq 1 20000"  # long: cut to head and tail
        elif kind == 5:
            command = f"grep -c step notes.txt; echo done {i}"
        else:
            command = f"printf 'line %s\\n' $(seq 1 {i % 50})"
        replies.append(f"Step {i}: checking progress.\n```bash\n{command}\n```")
    replies.append("DONE: the health check uses port 48213.")
    return replies


class RecordingModel(ScriptedModel):
    """Scripted replies; remembers each prompt's token count as the backend counts it."""

    def __init__(self, replies: list[str], **kwargs):
        super().__init__(replies, **kwargs)
        self.prompt_tokens: list[int] = []

    def complete(self, messages: list[Message], **kwargs) -> Reply:
        self.prompt_tokens.append(self.count_tokens(messages))
        return super().complete(messages, **kwargs)


def prefix_stable_share(calls: list[list[Message]]) -> float:
    extended = sum(1 for prev, cur in itertools.pairwise(calls) if cur[: len(prev)] == prev)
    return extended / max(1, len(calls) - 1)


def run_session(tmp_path: Path, model: ScriptedModel, context: ContextWindow, events: list[Event], **limits):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    output_limit = context.observation_chars(6000)
    with HostSandbox(work, tmp_path / "control", output_limit=output_limit) as box:
        agent = Agent(
            model,
            box,
            EventBus([events.append]),
            limits=RunLimits(reply_tokens=REPLY_TOKENS, **limits),
            context=context,
        )
        return agent.run("Make the health check use the port from the service settings.")


def minimal_budget() -> int:
    counter = TokenCounter.for_model(ScriptedModel([]))
    task = render("task", task="Make the health check use the port from the service settings.", context="")
    pinned = counter.messages([{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}])
    return pinned + REPLY_TOKENS + MIN_STEP_ROOM


@pytest.mark.parametrize("budget", ["minimal", 2500, 8000])
def test_300_step_session_stays_under_budget_at_every_step(tmp_path: Path, budget) -> None:
    window = minimal_budget() if budget == "minimal" else budget
    model = RecordingModel(session_replies(301))
    notes = ScriptedModel([f"Facts: port 48213 in settings.ini. Round {i}." for i in range(400)])
    events: list[Event] = []
    context = build_context(model, budget=window, reply_tokens=REPLY_TOKENS, summary_model=notes)
    context.on_event = events.append
    outcome = run_session(tmp_path, model, context, events, max_steps=400)

    assert outcome.status == "finished", outcome.reason
    assert outcome.steps == 301
    assert len(model.prompt_tokens) == 301
    assert max(model.prompt_tokens) <= window - REPLY_TOKENS
    compactions = [e for e in events if isinstance(e, ContextCompacted)]
    assert len(compactions) >= 5
    assert all(e.tokens_after < e.tokens_before for e in compactions if e.folded_messages)
    if budget != "minimal":
        assert any(not e.fallback for e in compactions)  # the summary model's notes were used
        assert "port 48213" in model.calls[-1][1]["content"]
    if budget == 8000:
        # Compaction in chunks: most prompts extend the previous one, so caches keep hitting.
        assert prefix_stable_share(model.calls) >= 0.85


def test_without_pressure_the_prompt_is_the_whole_history(tmp_path: Path) -> None:
    model = RecordingModel(session_replies(40))
    events: list[Event] = []
    context = build_context(model, reply_tokens=REPLY_TOKENS)
    outcome = run_session(tmp_path, model, context, events)
    assert outcome.status == "finished"
    assert not [e for e in events if isinstance(e, ContextCompacted)]
    assert prefix_stable_share(model.calls) == 1.0
    assert len(model.calls[-1]) == 2 + 2 * 39  # system, task, then every reply and observation


def failing_endpoint_model():
    """A real LiteLLM backend whose endpoint refuses connections: every call fails."""
    from agentcli.models.litellm_backend import LiteLLMModel
    from agentcli.models.retry import RetryPolicy

    return LiteLLMModel(
        "openai/summariser",
        api_base="http://127.0.0.1:9/v1",
        context_window=8192,
        retry=RetryPolicy(attempts=1),
        timeout=5,
    )


def test_fallback_digest_when_the_summary_model_errors(tmp_path: Path) -> None:
    model = RecordingModel(session_replies(120))
    events: list[Event] = []
    context = build_context(model, budget=3000, reply_tokens=REPLY_TOKENS, summary_model=failing_endpoint_model())
    context.on_event = events.append
    outcome = run_session(tmp_path, model, context, events, max_steps=200)

    assert outcome.status == "finished"
    compactions = [e for e in events if isinstance(e, ContextCompacted)]
    assert compactions and all(e.fallback for e in compactions)
    assert max(model.prompt_tokens) <= 3000 - REPLY_TOKENS
    notes = model.calls[-1][1]["content"]
    assert "Commands run (step: command -> result):" in notes
    assert re.search(r"\d+: ls nosuchdir\d+ -> exit 2", notes)
    assert "Files written:" in notes and "notes.txt" in notes
    assert "Errors still open:" in notes
    assert "Current plan:\n1. Find the service settings\n2. Fix the health check" in notes  # re-pinned


class TalkativeModel(ScriptedModel):
    """A summary model that ignores the length limit."""

    def complete(self, messages: list[Message], **kwargs) -> Reply:
        self.calls.append(list(messages))
        return Reply("\n".join(f"- very important detail {i}: " + "and so on, " * 20 for i in range(50)))


def test_fallback_digest_when_the_summary_is_too_long() -> None:
    main = ScriptedModel([])
    events: list[Event] = []
    context = ContextWindow(
        read_reply=reply_gist,
        model=main,
        window=2000,
        reply_tokens=200,
        summarizer=ModelSummarizer(TalkativeModel([])),
        on_event=events.append,
    )
    context.start(SYSTEM, "Task: count things.")
    for i in range(100):
        context.prompt()
        context.add("assistant", f"```bash\necho {i}\n```")
        context.add("user", f"[exit 0 · 0.0s]\n{i}")
    assert events and all(e.fallback for e in events if isinstance(e, ContextCompacted))
    assert "very important detail" not in context.messages()[1]["content"]
    assert "echo 99" in context.messages()[-2]["content"]


def test_near_the_wall_clock_a_fold_does_not_ask_the_summary_model() -> None:
    """On two cores a summary takes most of a minute: a run with less left folds into the digest alone,
    and one with enough asks, then wants twice what that ask took."""
    notes = ScriptedModel(["- the tests fail in test_a.py"] * 50)
    events: list[Event] = []
    context = ContextWindow(
        read_reply=reply_gist, model=ScriptedModel([]), window=1500, reply_tokens=200,
        summarizer=ModelSummarizer(notes), on_event=events.append,
    )  # fmt: skip
    left = [30.0]
    context.time_left = lambda: left[0]
    context.start(SYSTEM, "Task: count things.")
    for i in range(60):
        if i == 30:
            left[0] = 500.0
        context.prompt()
        context.add("assistant", f"```bash\ncat part{i}.txt\n```")
        context.add("user", "[exit 0 · 0.0s]\n" + f"line {i} of the part\n" * 20)
    folds = [e for e in events if isinstance(e, ContextCompacted)]
    assert len(folds) >= 4, folds
    assert any(e.fallback for e in folds) and any(not e.fallback for e in folds)
    assert all(e.fallback for e in folds[: next(i for i, e in enumerate(folds) if not e.fallback)])
    assert len(notes.calls) == sum(not e.fallback for e in folds)  # never asked while time was short


def test_facts_are_extracted_then_merged_and_the_plan_repinned() -> None:
    notes = ScriptedModel(
        ["- the port is 48213\n- config is in settings.ini", "Facts:\n- nothing new", "1. tests pass"]
    )
    context = ContextWindow(
        read_reply=reply_gist, model=ScriptedModel([]), window=1800, reply_tokens=200, summarizer=ModelSummarizer(notes)
    )
    context.start(SYSTEM, "Task: count things.")
    context.set_plan(["Count", "Report"])
    for i in range(300):
        context.prompt()
        context.add("assistant", f"Count on.\n```bash\necho {i}\n```")
        context.add("user", f"[exit 0 · 0.0s]\n{i}")
        if len(notes.calls) == 3:
            break
    first, second, _ = (call[0]["content"] for call in notes.calls)
    assert "Its task: Task: count things." in first and "1. Count\n2. Report" in first
    assert "<log>\n[step 1]\n$ echo 0\n[exit 0 · 0.0s]\n0\n[step 2]" in first
    assert "Notes kept so far:\n- the port is 48213\n- config is in settings.ini" in second
    block = context.messages()[1]["content"]
    assert block.startswith("Task: count things.\n\n[Steps 1-")
    assert "Current plan:\n1. Count\n2. Report\nFacts:\n- the port is 48213\n- config is in settings.ini\n" in block
    assert "- tests pass" in block and "nothing new" not in block
    assert "Commands run (step: command -> result):" in block  # the digest beside the facts
    assert context.messages()[2]["role"] == "assistant"  # steps resume with a reply


def test_facts_that_do_not_fit_go_least_relevant_first() -> None:
    from agentcli.context.summary import merge_facts

    kept = ["the service port is 48213", "mod3.py has 40 lines", "mod7.py has 12 lines"]
    new = ["mod9.py has 80 lines", "the service port is 48213"]
    merged = merge_facts(kept, new, "Find the port of the service", lambda facts: len(facts) <= 2)
    assert merged == ["the service port is 48213", "mod9.py has 80 lines"]


def test_summary_input_fits_a_small_summary_model() -> None:
    small = ScriptedModel(["Facts: ok."], context_window=1024)
    summarizer = ModelSummarizer(small)
    huge = [{"role": "assistant", "content": "```bash\ncat big\n```"}, {"role": "user", "content": "x" * 200_000}]
    request = SummaryRequest(task="t", plan=[], previous=[], steps=huge * 5, first_step=1, limit_tokens=100)
    assert summarizer(request) == "Facts: ok."
    assert small.count_tokens(small.calls[0]) <= 1024 - 100


class ProviderLimitModel(RecordingModel):
    """Scripted replies behind a provider that rejects prompts over its real limit, as APIs do."""

    def __init__(self, replies: list[str], limit: int):
        super().__init__(replies)
        self.limit = limit
        self.rejected = 0

    def complete(self, messages: list[Message], **kwargs) -> Reply:
        if self.count_tokens(messages) > self.limit:
            self.rejected += 1
            raise ContextLengthExceeded(f"maximum context length is {self.limit} tokens")
        return super().complete(messages, **kwargs)


def test_context_length_error_from_the_provider_is_recovered(tmp_path: Path) -> None:
    # The window believes it has 8000 tokens; the provider really takes 2500.
    model = ProviderLimitModel(session_replies(80), limit=2500)
    events: list[Event] = []
    context = ContextWindow(
        read_reply=reply_gist, model=model, window=8000, reply_tokens=REPLY_TOKENS, on_event=events.append
    )
    outcome = run_session(tmp_path, model, context, events, max_steps=100)

    assert outcome.status == "finished", outcome.reason
    assert model.rejected >= 1
    assert max(model.prompt_tokens) <= 2500
    assert len([e for e in events if isinstance(e, ModelReplied)]) == 80
    assert any(isinstance(e, ContextCompacted) for e in events)


def test_a_provider_that_never_accepts_fails_the_run_cleanly(tmp_path: Path) -> None:
    model = ProviderLimitModel(session_replies(10), limit=10)
    events: list[Event] = []
    context = ContextWindow(
        read_reply=reply_gist, model=model, window=8000, reply_tokens=REPLY_TOKENS, on_event=events.append
    )
    outcome = run_session(tmp_path, model, context, events)
    assert outcome.status == "failed"
    assert "does not fit the model's context window" in outcome.reason
    assert 2 <= model.rejected <= 4  # bounded retries, each after a harder compaction


def test_huge_task_is_cut_with_a_note() -> None:
    model = ScriptedModel([])
    context = ContextWindow(read_reply=reply_gist, model=model, window=4000, reply_tokens=500)
    task = "Task: BEGIN " + "requirement words " * 20_000 + " END"
    context.start(SYSTEM, task)
    prompt = context.prompt()
    assert model.count_tokens(prompt) <= 3500 - MIN_STEP_ROOM
    pinned = prompt[1]["content"]
    assert pinned.startswith("Task: BEGIN") and pinned.endswith("END")
    assert "characters of the task text cut to fit the context window" in pinned
    for i in range(30):  # and the session still runs
        context.add("assistant", f"```bash\necho {i}\n```")
        context.add("user", "[exit 0 · 0.0s]\n" + "out\n" * 50)
        assert model.count_tokens(context.prompt()) <= 3500


def test_check_task_rejects_a_budget_smaller_than_the_pinned_part() -> None:
    context = ContextWindow(read_reply=reply_gist, model=ScriptedModel([]), window=900, reply_tokens=500)
    context.check_task("small task", "/work")  # not strict: the task would be cut instead
    context.strict = True
    with pytest.raises(UsageError, match=r"context budget of 900 tokens is too small.*--context-budget \d+"):
        context.check_task("small task", "/work")


def test_long_outputs_are_cut_within_the_observation_budget(tmp_path: Path) -> None:
    model = RecordingModel(["```bash\nseq 1 200000\n```", "DONE: listed"])
    context = build_context(model, budget=4000, reply_tokens=REPLY_TOKENS)
    assert context.observation_chars(6000) <= (4000 - REPLY_TOKENS) // 4 * 3
    events: list[Event] = []
    outcome = run_session(tmp_path, model, context, events)
    assert outcome.status == "finished"
    observation = model.calls[1][-1]["content"]
    assert observation.startswith("[exit 0") and "\n1\n2\n3\n" in observation and "\n200000\n" in observation
    saved = re.search(r"Full output: (\S+)", observation)
    assert saved and "sed -n '100,200p'" in observation
    assert Path(saved.group(1)).read_text().count("\n") == 200000  # the full text, readable
    assert ScriptedModel([]).count_tokens([model.calls[1][-1]]) <= context.message_limit


def test_counter_matches_whole_prompt_counts() -> None:
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Task: fix calc.py"},
        {"role": "assistant", "content": "```bash\npython3 -m pytest -q\n```"},
        {"role": "user", "content": "[exit 1 · 0.3s]\nFAILED test_calc.py::test_add - assert -1 == 5"},
    ]
    scripted = ScriptedModel([])
    assert TokenCounter.for_model(scripted).messages(messages) == scripted.count_tokens(messages)
    assert TokenCounter(tiktoken_count).messages(messages) == tiktoken_count(messages)


def test_counter_with_litellm_offline() -> None:
    from agentcli.models.litellm_backend import LiteLLMModel

    model = LiteLLMModel("openai/gpt-4o-mini")
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Task: rename the function parse_args to parse_arguments everywhere."},
    ]
    counted = TokenCounter.for_model(model).messages(messages)
    assert abs(counted - model.count_tokens(messages)) <= 4
    assert model_window(model) >= 100_000  # from LiteLLM's bundled model info
    assert model_window(model, 5000) == 5000


class BrokenCounterModel(ScriptedModel):
    def count_tokens(self, messages: list[Message]) -> int:
        raise RuntimeError("no tokenizer here")


def test_counter_falls_back_to_tiktoken() -> None:
    messages: list[Message] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello " * 50}]
    assert TokenCounter.for_model(BrokenCounterModel([])).messages(messages) == tiktoken_count(messages)


def test_digest_records_commands_files_and_open_errors() -> None:
    digest = Digest()
    steps: list[Message] = [
        {"role": "assistant", "content": "```bash\nsed -i 's/a - b/a + b/' calc.py\n```"},
        {"role": "user", "content": "[exit 0 · 0.0s]\n(no output)"},
        {"role": "assistant", "content": "```bash\npython3 -m pytest -q\n```"},
        {"role": "user", "content": "[exit 1 · 0.4s]\nE   ImportError: cannot import name 'mul'\n1 failed"},
        {"role": "assistant", "content": "```bash\ncat > util.py <<'EOF'\nx = 1 > 2\nEOF\n```"},
        {"role": "user", "content": "[exit 0 · 0.0s]\n(no output)"},
    ]
    assert digest.add(steps, first_step=1, read_reply=reply_gist) == 3
    text = digest.render(lambda t: True)
    assert "1: sed -i 's/a - b/a + b/' calc.py -> exit 0" in text
    assert "2: python3 -m pytest -q -> exit 1" in text
    assert "Files written: calc.py, util.py" in text
    assert "python3 -m pytest -q: E   ImportError: cannot import name 'mul'" in text
    digest.add(
        [*steps[2:3], {"role": "user", "content": "[exit 0 · 0.5s]\n1 passed"}], first_step=4, read_reply=reply_gist
    )
    assert "Errors still open" not in digest.render(lambda t: True)
    short = digest.render(lambda t: len(t) < 200)
    assert len(short) < 200 and "earlier steps not listed" in short


def test_files_written_ignores_here_document_bodies() -> None:
    command = "cat > app.py <<'EOF'\nprint(1 > 0)\nEOF\necho ok > log.txt 2>/dev/null; mv a.txt b.txt"
    assert files_written(command) == ["app.py", "log.txt", "b.txt"]


# -- the CLI -----------------------------------------------------------------------------------------


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"AGENTCLI_CONFIG_DIR": str(cwd / ".no-user-config"), "PATH": "/usr/bin:/bin"}
    import os

    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, **env},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("demo\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


def test_cli_budget_smaller_than_the_pinned_part_exits_2(repo: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["```bash\ntouch ran.txt && ls ran.txt\n```", "DONE: ok"]))
    result = cli("solve", "make a file", "--model", f"scripted:{replies}", "--sandbox", "host",
                 "--context-budget", "600", cwd=repo)  # fmt: skip
    assert result.returncode == 2
    assert "context budget of 600 tokens is too small" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (repo / "ran.txt").exists()


def test_cli_long_session_under_the_smallest_budget_that_fits(repo: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(session_replies(150)))
    first = cli("solve", "make the health check use the configured port", "--model", f"scripted:{replies}",
                "--sandbox", "host", "--context-budget", "600", cwd=repo)  # fmt: skip
    needed = int(re.search(r"--context-budget (\d+) or more", first.stderr).group(1))
    result = cli("solve", "make the health check use the configured port", "--model", f"scripted:{replies}",
                 "--sandbox", "host", "--context-budget", str(needed), "--max-steps", "200", "--json",
                 cwd=repo)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in result.stdout.splitlines()]
    replied = [e for e in events if e["type"] == "model_replied"]
    assert len(replied) == 150
    assert max(e["prompt_tokens"] for e in replied) <= needed - 1024
    assert sum(e["type"] == "context_compacted" for e in events) >= 10
    assert events[-1]["type"] == "result" and events[-1]["status"] == "finished"


def test_a_folded_follow_up_task_stays_in_the_notes() -> None:
    context = ContextWindow(read_reply=reply_gist, model=ScriptedModel([]), window=1500, reply_tokens=200)
    context.start(SYSTEM, render("task", task="count things", context=""))
    context.add("assistant", "```bash\necho 0\n```")
    context.add("user", "[exit 0 · 0.0s]\n0")
    context.add("user", render("task", task="now also count the files in src/", context=""))
    for i in range(1, 160):
        context.prompt()
        context.add("assistant", f"```bash\necho {i}\n```")
        context.add("user", f"[exit 0 · 0.0s]\n{i}")
    notes = context.messages()[1]["content"]
    assert context.compactions >= 2
    assert "Later tasks from the user (the last is current):\n- now also count the files in src/" in notes
