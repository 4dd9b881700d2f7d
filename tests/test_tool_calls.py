"""The agent's actions as native tools: LiteLLM over real HTTP to an OpenAI-compatible server on
loopback that answers with tool calls (whole and streamed), the loop reading a call as it reads the
same action in text, and `agentcli solve` fixing a bug by tool calls alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.agent.tools import ACTION_TOOLS, call_text, parsed_call
from agentcli.events import Event, EventBus, FormatError
from agentcli.models.base import ToolCall
from agentcli.models.litellm_backend import LiteLLMModel
from agentcli.models.retry import RetryPolicy
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for
from tests.openai_server import ScriptedOpenAIServer
from tests.test_solve import agentcli

ONLY_FIRST = "Only your first tool call ran; the other 1 did not. Make one call per reply."
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "list the files"}]


def _model(server: ScriptedOpenAIServer, tool_calls: str = "on") -> LiteLLMModel:
    return LiteLLMModel("openai/test-model", api_base=server.url, retry=RetryPolicy(attempts=1), tool_calls=tool_calls)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_tool_call_comes_back_whole(streamed: bool):
    pieces: list[str] = []
    arguments = {"path": "notes/a.md", "content": '# A\n\nsome "quoted" text\n'}
    with ScriptedOpenAIServer([{"tool": "write_file", "arguments": arguments}]) as server:
        reply = _model(server).complete(MESSAGES, tools=ACTION_TOOLS, on_token=pieces.append if streamed else None)
    assert reply.tool_call is not None
    assert (reply.tool_call.name, reply.tool_call.arguments) == ("write_file", arguments)
    assert server.requests[0]["tools"] == ACTION_TOOLS
    assert reply.usage.completion_tokens > 0


@pytest.mark.parametrize("setting", ["off", "auto"])
def test_tools_are_offered_only_where_the_setting_and_the_model_allow(setting: str):
    """`auto` asks LiteLLM's map, which does not know a model behind a local server: text then."""
    with ScriptedOpenAIServer(["```bash\nls\n```"]) as server:
        reply = _model(server, setting).complete(MESSAGES, tools=ACTION_TOOLS)
    assert "tools" not in server.requests[0]
    assert reply.text == "```bash\nls\n```" and reply.tool_call is None


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (ToolCall("bash", {"command": "ls -la"}), ("command", "ls -la")),
        (ToolCall("write_file", {"path": "./a.py", "content": "x = 1\n"}), ("file_write", ("a.py", "x = 1\n"))),
        (ToolCall("finish", {"summary": "fixed add"}), ("summary", "fixed add")),
        (ToolCall("bash", None, "{not json"), ("error", "were not a JSON object")),
        (ToolCall("write_file", {"path": "../outside.py", "content": "x"}), ("error", "relative path inside")),
        (ToolCall("bash", {"command": "  "}), ("error", "needs a command")),
        (ToolCall("run", {"command": "ls"}), ("error", "There is no tool 'run'")),
        (
            ToolCall("bash", {"command": "ls"}, more=1),
            ("notes", ["Only your first tool call ran; the other 1 did not. Make one call per reply."]),
        ),
    ],
)
def test_a_call_is_the_action_its_text_form_is(call: ToolCall, expected):
    parsed = parsed_call(call, call_text(call))
    field, value = expected
    if field == "error":
        assert value in (parsed.error or "") and parsed.command is None and parsed.file_write is None
    else:
        assert getattr(parsed, field) == value and parsed.error is None
        assert parsed.finished == (call.name == "finish")


def test_the_loop_runs_tool_calls_and_text_replies_alike(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    replies = [
        "PLAN:\n1. Write the file.\n2. Show it.\n\n```bash\nls\n```",
        {"tool": "write_file", "arguments": {"path": "out/hello.txt", "content": "hello\n"}},
        {"tool": "bash", "arguments": {"command": "cat out/hello.txt"}, "text": "Now I check it."},
        {"tool": "finish", "arguments": {"summary": "wrote out/hello.txt"}},
    ]
    model = ScriptedModel(replies, calls_tools=True)
    seen: list[Event] = []
    with HostSandbox(root, channel_for(root)) as box:
        outcome = Agent(model, box, EventBus([seen.append]), limits=RunLimits()).run("Write out/hello.txt")
    assert outcome.status == "finished" and outcome.summary == "wrote out/hello.txt"
    assert (root / "out" / "hello.txt").read_text() == "hello\n"
    assert not [e for e in seen if isinstance(e, FormatError)]
    # The model sees its calls as the text protocol's actions, and was offered the tools each time.
    history = [m["content"] for m in model.calls[-1] if m["role"] == "assistant"]
    assert history[2] == "Now I check it.\n```bash\ncat out/hello.txt\n```"


def test_a_written_files_path_is_from_the_repository_wherever_the_shell_is(tmp_path: Path):
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    replies = [
        {"tool": "bash", "arguments": {"command": "cd out"}},
        {"tool": "write_file", "arguments": {"path": "out/hello.txt", "content": "hello\n"}},
        {"tool": "finish", "arguments": {"summary": "wrote out/hello.txt"}},
    ]
    with HostSandbox(root, channel_for(root)) as box:
        Agent(ScriptedModel(replies, calls_tools=True), box, EventBus([]), limits=RunLimits()).run("Write it")
    assert (root / "out" / "hello.txt").read_text() == "hello\n" and not (root / "out" / "out").exists()


def test_solve_fixes_a_bug_by_tool_calls_through_an_openai_compatible_server(failing_repo: Path):
    script = [
        {"tool": "bash", "arguments": {"command": "python3 -m pytest -q"}},
        {"tool": "write_file", "arguments": {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}},
        {"tool": "bash", "arguments": {"command": "python3 -m pytest -q test_calc.py"}},
        {"tool": "finish", "arguments": {"summary": "add() adds"}},
    ]
    with ScriptedOpenAIServer(script) as server:
        result = agentcli(
            "solve", "fix the failing test", "--model", "openai/local-model", "--api-base", server.url,
            "--sandbox", "host", "--json", cwd=failing_repo, env={"AGENTCLI_TOOL_CALLS": "on"},
        )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stdout + result.stderr
    assert events[-1]["status"] == "finished"
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert all(request.get("tools") == ACTION_TOOLS for request in server.requests)
    assert not [e for e in events if e["type"] == "format_error"]


def test_a_bad_tool_calls_setting_is_one_line(failing_repo: Path):
    result = agentcli(
        "solve", "x", "--model", "scripted:none.json", cwd=failing_repo, env={"AGENTCLI_TOOL_CALLS": "yes"}
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["agentcli: tool_calls must be one of auto, on, off, got 'yes'"]


def test_a_cached_tool_call_comes_back_as_a_tool_call(tmp_path: Path):
    from agentcli.models.cache import CachedModel, ResponseCache

    call = {"tool": "bash", "arguments": {"command": "ls"}}
    with ScriptedOpenAIServer([call]) as server:
        cached = CachedModel(_model(server), ResponseCache(tmp_path))
        first = cached.complete(MESSAGES, tools=ACTION_TOOLS)
        again = cached.complete(MESSAGES, tools=ACTION_TOOLS)
    assert len(server.requests) == 1 and again.cached
    assert again.tool_call == first.tool_call == ToolCall("bash", {"command": "ls"}, '{"command": "ls"}')
    # Offered tools or a grammar, a request is another request.
    key = ResponseCache.key
    assert (
        len({key("m", MESSAGES), key("m", MESSAGES, tools=ACTION_TOOLS), key("m", MESSAGES, grammar="root ::= x")}) == 3
    )
