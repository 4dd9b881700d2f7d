"""LiteLLM over real HTTP to an OpenAI-compatible server on loopback that serves scripted replies."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agentcli.models.base import ModelUnavailable
from agentcli.models.litellm_backend import LiteLLMModel
from agentcli.models.retry import RetryPolicy, parse_retry_after
from tests.conftest import FIX_REPLIES
from tests.openai_server import ScriptedOpenAIServer
from tests.test_solve import agentcli

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def model(server: ScriptedOpenAIServer, retries: list | None = None, attempts: int = 4) -> LiteLLMModel:
    return LiteLLMModel(
        "openai/test-model",
        api_base=server.url,
        retry=RetryPolicy(attempts=attempts, base_delay=0.05, max_delay=2),
        on_retry=(lambda a, d, e: retries.append((a, d, str(e)))) if retries is not None else None,
    )


def test_plain_reply_with_usage_and_zero_cost():
    with ScriptedOpenAIServer(["hi there"]) as server:
        reply = model(server).complete(MESSAGES)
    assert reply.text == "hi there"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.cost == 0.0  # an unknown local model is free, not an error
    assert server.requests[0]["messages"] == MESSAGES


def test_streaming_delivers_pieces():
    pieces: list[str] = []
    with ScriptedOpenAIServer(["one two three"]) as server:
        reply = model(server).complete(MESSAGES, on_token=pieces.append)
    assert reply.text == "one two three" and len(pieces) == 3
    assert reply.usage.time_to_first_token is not None


def test_429_then_success_honours_retry_after():
    retries: list = []
    with ScriptedOpenAIServer([(429, {"Retry-After": "1"}), "after the wait"]) as server:
        reply = model(server, retries).complete(MESSAGES)
        gap = server.request_times[1] - server.request_times[0]
    assert reply.text == "after the wait"
    assert len(retries) == 1 and retries[0][1] == 1.0 and "429" in retries[0][2]
    assert gap >= 0.95


def test_500_then_success():
    retries: list = []
    with ScriptedOpenAIServer([(500, {}), (502, {}), "recovered"]) as server:
        reply = model(server, retries).complete(MESSAGES)
    assert reply.text == "recovered" and len(retries) == 2 and len(server.requests) == 3


def test_gives_up_after_bounded_tries():
    with ScriptedOpenAIServer([(503, {})] * 10) as server:
        with pytest.raises(ModelUnavailable, match="gave up after 3 tries"):
            model(server, attempts=3).complete(MESSAGES)
        assert len(server.requests) == 3


def test_client_errors_are_not_retried():
    with ScriptedOpenAIServer([(401, {}), "never"]) as server:
        with pytest.raises(ModelUnavailable):
            model(server).complete(MESSAGES)
        assert len(server.requests) == 1


def test_retry_after_parsing():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_solve_through_openai_compatible_server(failing_repo: Path):
    with ScriptedOpenAIServer([(429, {"Retry-After": "0"}), *FIX_REPLIES]) as server:
        result = agentcli(
            "solve",
            "fix the failing test",
            "--model",
            "openai/local-model",
            "--api-base",
            server.url,
            "--sandbox",
            "host",
            cwd=failing_repo,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (failing_repo / "calc.py").read_text().endswith("return a + b\n")
    assert "Run the tests again" in server.requests[-1]["messages"][2]["content"]


def test_endpoint_down_exits_3(failing_repo: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = agentcli(
        "solve",
        "x",
        "--model",
        "openai/local-model",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
        "--sandbox",
        "host",
        cwd=failing_repo,
        env={"AGENTCLI_RETRIES": "1"},
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert "model unavailable" in result.stdout
