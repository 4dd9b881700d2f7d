"""A client-side rate limiter: token buckets for requests and tokens per minute, shared between processes.

The buckets live in a small JSON file under the user cache dir, read and written under an exclusive
`flock`, so every agentcli process of the user that talks to the same endpoint (parallel `agentcli eval`
workers are separate processes) draws on one quota instead of each tripping the provider's own limit."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

MAX_WAIT = 120.0  # no one wait is longer than this; the next try reads the buckets again


class RateLimiter:
    """`requests_per_minute` requests spaced evenly (a bucket of one), `tokens_per_minute` tokens with a burst of a
    whole minute's worth. 0 turns a limit off."""

    def __init__(
        self,
        key: str,
        *,
        requests_per_minute: int = 0,
        tokens_per_minute: int = 0,
        directory: Path | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if directory is None:
            from agentcli.paths import cache_dir

            directory = cache_dir() / "ratelimit"
        self.rpm = max(0, requests_per_minute)
        self.tpm = max(0, tokens_per_minute)
        self.path = directory / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".json")
        self.clock = clock
        self.sleep = sleep

    @property
    def active(self) -> bool:
        return bool(self.rpm or self.tpm)

    def acquire(self, tokens: int = 0) -> float:
        """Wait until one request of about `tokens` tokens may go; the seconds waited."""
        if not self.active:
            return 0.0
        waited = 0.0
        while True:
            wait = self._take(tokens)
            if wait <= 0:
                return waited
            wait = min(wait, MAX_WAIT)
            self.sleep(wait)
            waited += wait

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once a call's real usage is known."""
        if not self.tpm or actual == estimated:
            return
        with self._locked() as state:
            state["tokens"] = min(self.tpm, state["tokens"] + estimated - actual)

    def _take(self, tokens: int) -> float:
        """Take from the buckets and return 0, or the seconds until they hold enough."""
        with self._locked() as state:
            need = min(tokens, self.tpm) if self.tpm else 0
            waits = []
            if self.rpm and state["requests"] < 1:
                waits.append((1 - state["requests"]) * 60.0 / self.rpm)
            if self.tpm and state["tokens"] < need:
                waits.append((need - state["tokens"]) * 60.0 / self.tpm)
            if waits:
                return max(waits)
            if self.rpm:
                state["requests"] -= 1
            if self.tpm:
                state["tokens"] -= tokens  # below zero for a request larger than a minute's worth
            return 0.0

    def _locked(self) -> _Locked:
        return _Locked(self)


class _Locked:
    """The buckets, refilled to now, read and written back under an exclusive lock on their file."""

    def __init__(self, limiter: RateLimiter):
        self.limiter = limiter
        self.fd = -1
        self.state: dict[str, float] = {}

    def __enter__(self) -> dict[str, float]:
        import fcntl

        lim = self.limiter
        lim.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.fd = os.open(lim.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        now = lim.clock()
        try:
            raw = json.loads(os.pread(self.fd, 4096, 0) or b"{}")
        except ValueError:
            raw = {}
        at = float(raw.get("at", now)) if isinstance(raw, dict) else now
        elapsed = max(0.0, now - at)  # a clock that went back refills nothing
        requests = float(raw.get("requests", 1.0)) if isinstance(raw, dict) else 1.0
        tokens = float(raw.get("tokens", lim.tpm)) if isinstance(raw, dict) else float(lim.tpm)
        self.state = {
            "requests": min(1.0, requests + elapsed * lim.rpm / 60.0),
            "tokens": min(float(lim.tpm), tokens + elapsed * lim.tpm / 60.0),
            "at": now,
        }
        return self.state

    def __exit__(self, *exc: object) -> None:
        try:
            data = json.dumps(self.state).encode()
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, data, 0)
        finally:
            os.close(self.fd)  # closing drops the lock
