"""Models that degrade instead of failing: faults injected by a loopback server, handled by retries, the
fallback router, the rate limiter and the response cache, in process and through the real CLI."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.errors import UsageError
from agentcli.models.base import ContextLengthExceeded, ModelUnavailable, RequestRejected
from agentcli.models.cache import CachedModel, ResponseCache
from agentcli.models.litellm_backend import LiteLLMModel
from agentcli.models.ratelimit import RateLimiter
from agentcli.models.retry import RetryPolicy
from agentcli.models.router import ModelRouter
from agentcli.models.scripted import ScriptedModel
from agentcli.models.stream import StreamRelay
from tests.conftest import FIX_REPLIES, git
from tests.fault_server import CONTEXT_WORDINGS, Fault, FaultServer
from tests.test_solve import agentcli

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def fast_model(server: FaultServer, retries: list | None = None, *, attempts: int = 3, **options) -> LiteLLMModel:
    return LiteLLMModel(
        "openai/fault-model",
        api_base=server.url,
        api_key="dummy",
        retry=RetryPolicy(attempts=attempts, base_delay=0.01, max_delay=0.05, retry_after_cap=options.pop("cap", 300)),
        on_retry=(lambda a, d, e: retries.append((a, d, str(e)))) if retries is not None else None,
        **options,
    )


# --- every injected fault, through LiteLLMModel ---------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    "fault",
    [
        Fault.http(429, "0"),
        Fault.http(500),
        Fault.http(502),
        Fault.http(503),
        Fault.garbage(),
        Fault.empty(),
        Fault.cut("one two three four five six"),
        Fault.slow("too slow to wait for", 2.0),
    ],
    ids=["429", "500", "502", "503", "garbage", "empty", "cut", "slow"],
)
def test_each_fault_is_retried_and_the_run_goes_on(fault: Fault, stream: bool):
    retries: list = []
    pieces: list[str] = []
    with FaultServer([fault, "recovered after a fault"]) as server:
        model = fast_model(server, retries, timeout=0.5)
        reply = model.complete(MESSAGES, on_token=pieces.append if stream else None)
        requests = len(server.requests)
    if fault.kind == "cut" and not stream:  # a cut only cuts a stream; a plain reply arrives whole
        assert reply.text == "one two three four five six" and requests == 1
        return
    assert reply.text == "recovered after a fault"
    assert requests == 2 and len(retries) == 1
    if stream and fault.kind == "cut":  # the cut reply's start was shown; the other reply is not shown over it
        assert "".join(pieces) == "one two three "
    elif stream:
        assert "".join(pieces) == "recovered after a fault"  # nothing shown twice


def test_a_stream_cut_half_way_is_not_shown_twice():
    pieces: list[str] = []
    text = "alpha beta gamma delta epsilon zeta"
    with FaultServer([Fault.cut(text), text]) as server:
        reply = fast_model(server).complete(MESSAGES, on_token=pieces.append)
        assert len(server.requests) == 2
    assert reply.text == text
    assert "".join(pieces) == text  # the first half once, then only what follows it
    assert pieces[:3] == ["alpha ", "beta ", "gamma "]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wording", sorted(CONTEXT_WORDINGS))
def test_context_length_errors_are_the_callers_and_not_retried(wording: str, stream: bool):
    with FaultServer([Fault.context_length(wording), "never"]) as server:
        with pytest.raises(ContextLengthExceeded):
            fast_model(server).complete(MESSAGES, on_token=(lambda p: None) if stream else None)
        assert len(server.requests) == 1


def test_bad_request_is_rejected_not_retried():
    with FaultServer([Fault.bad_request(), "never"]) as server:
        with pytest.raises(RequestRejected, match="request rejected"):
            fast_model(server).complete(MESSAGES)
        assert len(server.requests) == 1


def test_retry_after_is_honoured_up_to_the_cap():
    retries: list = []
    with FaultServer([Fault.http(429, "2"), Fault.http(429, "3600"), "at last"]) as server:
        reply = fast_model(server, retries, cap=0.3).complete(MESSAGES)
        gaps = [b - a for a, b in itertools.pairwise(server.request_times)]
    assert reply.text == "at last"
    assert [delay for _, delay, _ in retries] == [0.3, 0.3]  # 2 s and an hour, both capped at 0.3 s
    assert all(0.25 <= gap < 1.0 for gap in gaps)


def test_retry_after_below_the_cap_is_honoured_in_full():
    policy = RetryPolicy(max_delay=30, retry_after_cap=300)
    assert policy.delay(1, 120.0) == 120.0  # not cut to the backoff's own 30 s
    assert policy.delay(1, 900.0) == 300.0


def test_gives_up_with_model_unavailable_after_bounded_tries():
    with FaultServer([], default=Fault.http(503)) as server:
        with pytest.raises(ModelUnavailable, match="gave up after 2 tries"):
            fast_model(server, attempts=2).complete(MESSAGES)
        assert len(server.requests) == 2


# --- the stream relay ---------------------------------------------------------------------------------------------


def test_stream_relay_passes_each_part_once():
    shown: list[str] = []
    relay = StreamRelay(shown.append)
    first = relay.attempt()
    for piece in ["a ", "b "]:
        first(piece)
    second = relay.attempt()
    for piece in ["a ", "b ", "c"]:
        second(piece)
    third = relay.attempt()  # another model, another reply: not shown over the old one
    for piece in ["x ", "y"]:
        third(piece)
    relay.deliver("a b c d")
    assert shown == ["a ", "b ", "c", " d"]


# --- the router ---------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_router_falls_back_and_returns_after_the_cool_down():
    switches: list[tuple[str, str, str]] = []
    clock = Clock()
    script = ["from primary again"]
    primary = FaultServer(lambda body: script.pop(0) if clock.now > 1100 else Fault.http(503))
    with primary, FaultServer(["from the fallback", "fallback once more"]) as backup:
        made: list[str] = []

        def factory(name: str) -> LiteLLMModel:
            made.append(name)
            return fast_model(backup, attempts=2)

        router = ModelRouter(
            fast_model(primary, attempts=2),
            ["openai/backup"],
            factory,
            cooldown=60,
            on_switch=lambda *a: switches.append(a),
            clock=clock,
        )
        assert made == []  # not created before it is needed
        assert router.complete(MESSAGES).text == "from the fallback"
        assert made == ["openai/backup"] and len(primary.requests) == 2
        clock.now += 30  # still cooling down: the primary is not asked
        assert router.complete(MESSAGES).text == "fallback once more"
        assert len(primary.requests) == 2
        clock.now += 100
        assert router.complete(MESSAGES).text == "from primary again"
    assert [(old, new) for old, new, _ in switches] == [
        ("openai/fault-model", "openai/backup"),
        ("openai/backup", "openai/fault-model"),
    ]
    assert "unavailable" in switches[0][2] and "503" in switches[0][2]
    assert "cooled down" in switches[1][2]
    assert "fault-model: " not in switches[0][2]  # the failing model is named once, not twice
    assert router.name == "openai/fault-model"


@pytest.mark.parametrize(
    "fault, error",
    [(Fault.context_length("openai"), ContextLengthExceeded), (Fault.bad_request(), RequestRejected)],
    ids=["context", "bad-request"],
)
def test_router_does_not_fall_back_on_the_callers_errors(fault: Fault, error: type):
    made: list[str] = []
    with FaultServer([fault]) as primary:
        router = ModelRouter(fast_model(primary), ["scripted:x"], lambda name: made.append(name) or None)
        with pytest.raises(error):
            router.complete(MESSAGES)
    assert made == []


def test_router_reports_every_failure_when_the_whole_chain_is_down():
    with FaultServer([], default=Fault.http(502)) as primary:

        def factory(name: str):
            raise UsageError("no such model here")

        router = ModelRouter(fast_model(primary, attempts=1), ["local/missing"], factory)
        with pytest.raises(ModelUnavailable) as raised:
            router.complete(MESSAGES)
    assert "openai/fault-model" in str(raised.value) and "local/missing: cannot be loaded" in str(raised.value)


def test_router_streams_a_fallback_reply_without_repeating_the_failed_one():
    pieces: list[str] = []
    with FaultServer([Fault.cut("half of a reply that dies")], default=Fault.http(503)) as primary:
        router = ModelRouter(
            fast_model(primary, attempts=2), ["scripted:x"], lambda name: ScriptedModel(["half of a reply that dies"])
        )
        reply = router.complete(MESSAGES, on_token=pieces.append)
    assert reply.text == "half of a reply that dies"
    assert "".join(pieces) == "half of a reply that dies"


# --- the rate limiter ---------------------------------------------------------------------------------------------


def test_rate_limiter_spaces_requests_at_the_server(tmp_path: Path):
    limiter = RateLimiter("k", requests_per_minute=600, directory=tmp_path)  # one every 0.1 s
    with FaultServer(["ok"] * 5) as server:
        model = fast_model(server, limiter=limiter)
        for _ in range(5):
            model.complete(MESSAGES)
        times = server.request_times
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.08, gaps
    assert times[-1] - times[0] >= 0.38


def test_rate_limiter_is_shared_between_limiters_of_one_key(tmp_path: Path):
    """Two workers (separate limiters, as separate processes have) draw on one quota through the file."""
    with FaultServer(["ok"] * 6) as server:

        def worker() -> None:
            limiter = RateLimiter("shared", requests_per_minute=600, directory=tmp_path)
            model = fast_model(server, limiter=limiter)
            for _ in range(3):
                model.complete(MESSAGES)

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
        times = sorted(server.request_times)
    assert len(times) == 6
    assert times[-1] - times[0] >= 0.45  # six requests at 0.1 s apart, not two bursts of three


def test_token_bucket_waits_for_tokens(tmp_path: Path):
    clock = Clock()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    limiter = RateLimiter("t", tokens_per_minute=600, directory=tmp_path, clock=clock, sleep=sleep)
    assert limiter.acquire(500) == 0.0
    assert limiter.acquire(200) == pytest.approx(10.0)  # 100 left, 100 short at 10 tokens/s
    limiter.settle(estimated=200, actual=100)  # the call used less than feared: 100 back
    assert limiter.acquire(100) == 0.0


# --- the response cache -------------------------------------------------------------------------------------------


def test_cache_hit_skips_the_server_and_streams_once(tmp_path: Path):
    hits: list[str] = []
    with FaultServer(["cached words here", "warmer reply"]) as server:
        model = CachedModel(fast_model(server), ResponseCache(tmp_path), on_hit=lambda name, key: hits.append(name))
        first = model.complete(MESSAGES, temperature=0.0)
        pieces: list[str] = []
        second = model.complete(MESSAGES, temperature=0.0, on_token=pieces.append)
        assert len(server.requests) == 1
        third = model.complete(MESSAGES, temperature=0.7)  # other sampling: a miss
        assert len(server.requests) == 2
    assert not first.cached and second.cached and not third.cached
    assert second.text == first.text == "cached words here" and third.text == "warmer reply"
    assert pieces == ["cached words here"]
    assert second.raw == {"cached": second.raw["cached"]} and second.usage.prompt_evaluated == 0
    assert hits == ["openai/fault-model"]


def test_cache_key_covers_model_messages_and_sampling():
    key = ResponseCache.key
    base = key("m", MESSAGES, temperature=0.0, max_tokens=100)
    assert base == key("m", MESSAGES, temperature=0.0, max_tokens=100)
    others = [
        key("n", MESSAGES, temperature=0.0, max_tokens=100),
        key("m", MESSAGES[:1], temperature=0.0, max_tokens=100),
        key("m", MESSAGES, temperature=0.5, max_tokens=100),
        key("m", MESSAGES, temperature=0.0, max_tokens=200),
        key("m", MESSAGES, temperature=0.0, max_tokens=100, stop=("```",)),
        key("m", MESSAGES, temperature=0.0, max_tokens=100, prefix="PLAN:"),
        key("m", MESSAGES, temperature=0.0, max_tokens=100, endpoint="http://other"),
    ]
    assert base not in others and len(set(others)) == len(others)


def test_cache_size_cap_evicts_the_least_recently_used(tmp_path: Path):
    cache = ResponseCache(tmp_path, max_bytes=3000)
    keys = [ResponseCache.key("m", [{"role": "user", "content": str(i)}]) for i in range(5)]
    for i, key in enumerate(keys[:3]):
        cache.put(key, {"text": "x" * 900})
        stamp = time.time() - 100 + i
        path = tmp_path / key[:2] / f"{key}.json"
        import os

        os.utime(path, (stamp, stamp))
    assert cache.get(keys[0]) is not None  # used now: the newest
    cache.put(keys[3], {"text": "y" * 900})  # four entries of ~915 bytes: over 3000
    assert cache.get(keys[1]) is None  # the least recently used went
    assert cache.get(keys[0]) is not None and cache.get(keys[2]) is not None and cache.get(keys[3]) is not None
    total = sum(p.stat().st_size for p in tmp_path.glob("*/*.json"))
    assert total <= 3000


# --- settings -----------------------------------------------------------------------------------------------------


def test_settings_fallbacks_roles_and_limits(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        'fallbacks = ["openai/b", "local/qwen2.5-coder-1.5b"]\nretry_after_cap = 60\nrequests_per_minute = 30\n'
        '[roles]\nsummary = "local/qwen2.5-coder-0.5b"\n'
    )
    settings = load_settings(None)
    assert settings.fallbacks == ["openai/b", "local/qwen2.5-coder-1.5b"]
    assert settings.summary_model == "local/qwen2.5-coder-0.5b"  # the summary role is the summary_model setting
    assert settings.retry_after_cap == 60 and settings.requests_per_minute == 30 and settings.cache is False
    monkeypatch.setenv("AGENTCLI_FALLBACKS", "openai/c, openai/d")
    assert load_settings(None).fallbacks == ["openai/c", "openai/d"]
    assert load_settings(None, {"fallbacks": ["x/y"], "cache": True}).fallbacks == ["x/y"]


def test_unknown_role_and_a_role_set_twice_are_usage_errors(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_CONFIG_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('[roles]\nreviewer = "openai/x"\n')
    with pytest.raises(UsageError, match="unknown role 'reviewer'"):
        load_settings(None)
    (tmp_path / "config.toml").write_text('summary_model = "a/b"\n[roles]\nsummary = "openai/x"\n')
    with pytest.raises(UsageError, match="keep one"):
        load_settings(None)


def test_a_repository_file_may_not_choose_fallbacks(failing_repo: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_CONFIG_DIR", str(tmp_path / "none"))
    (failing_repo / ".agentcli.toml").write_text(
        'fallbacks = ["openai/elsewhere"]\ncache = true\n[roles]\nsummary = "openai/x"\n'
    )
    settings = load_settings(failing_repo)
    assert settings.fallbacks == [] and settings.summary_model == ""
    assert {"fallbacks", "summary_model"} <= set(settings.ignored)
    assert settings.cache is True  # not a security setting


# --- through the real CLI -----------------------------------------------------------------------------------------


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "dummy",
        "AGENTCLI_CACHE_DIR": str(tmp_path / "cache"),
        "AGENTCLI_RETRIES": "1",
        **extra,
    }


def solve_cli(repo: Path, server: FaultServer, *args: str, env: dict[str, str]):
    result = agentcli(
        "solve",
        "fix the failing test",
        "--model",
        "openai/x",
        "--api-base",
        server.url,
        "--sandbox",
        "host",
        "--json",
        *args,
        cwd=repo,
        env=env,
    )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result, events


def test_cli_falls_back_to_the_next_model(failing_repo: Path, tmp_path: Path, write_replies):
    scripted = write_replies(FIX_REPLIES)
    with FaultServer([], default=Fault.http(503)) as server:
        result, events = solve_cli(failing_repo, server, "--fallback", scripted, env=cli_env(tmp_path))
        requests = len(server.requests)
    assert result.returncode == 0, result.stderr + result.stdout
    assert requests == 2  # one try and one retry, then the fallback for the rest of the cool-down
    switched = [e for e in events if e["type"] == "model_switched"]
    assert len(switched) == 1 and switched[0]["from_model"] == "openai/x" and switched[0]["to_model"] == scripted
    assert any(e["type"] == "notice" and "model switched: openai/x unavailable" in e["message"] for e in events)
    assert (failing_repo / "calc.py").read_text().endswith("return a + b\n")
    assert "Traceback" not in result.stderr


def test_cli_exits_3_with_one_line_when_the_whole_chain_is_down(failing_repo: Path, tmp_path: Path):
    with FaultServer([], default=Fault.http(503)) as server, FaultServer([], default=Fault.http(429, "0")) as other:
        result, events = solve_cli(failing_repo, server, "--fallback", f"openai/y@{other.url}", env=cli_env(tmp_path))
        assert len(server.requests) == 2 and len(other.requests) == 2
    assert result.returncode == 3, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    finished = events[-1]
    assert finished["type"] == "result" and "every model of the fallback chain failed" in finished["reason"]
    assert [e["to_model"] for e in events if e["type"] == "model_switched"] == [f"openai/y@{other.url}"]


def test_cli_cache_replays_a_rerun_without_asking_the_server(failing_repo: Path, tmp_path: Path):
    env = cli_env(tmp_path)
    with FaultServer(list(FIX_REPLIES)) as server:
        first, _ = solve_cli(failing_repo, server, "--cache", env=env)
        assert first.returncode == 0, first.stderr + first.stdout
        asked = len(server.requests)
        git(failing_repo, "reset", "-q", "--hard")  # the task's repository as it was, for the re-run
        second, events = solve_cli(failing_repo, server, "--cache", env=env)
        assert second.returncode == 0, second.stderr + second.stdout
        assert len(server.requests) == asked  # every call of the re-run came from the cache
    assert len([e for e in events if e["type"] == "model_cache_hit"]) == asked
