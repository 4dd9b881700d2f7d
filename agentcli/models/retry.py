"""Retries with exponential backoff and jitter, honouring `Retry-After`, giving up after a bound."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass
class RetryPolicy:
    attempts: int = 5  # total tries, the first included
    base_delay: float = 1.0
    max_delay: float = 30.0  # the longest backoff of our own choosing
    jitter: float = 0.25  # up to this fraction of the delay added at random
    retry_after_cap: float = 300.0  # a server's `Retry-After` is honoured in full up to this many seconds

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before try number `attempt + 1` (attempt counts from 1)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_cap)
        backoff = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        return backoff * (1 + self.jitter * random.random())


class Retryable(Exception):
    """Raised by a call that may succeed if tried again."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` is either seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    on_retry: Callable[[int, float, Retryable], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `call`, retrying on `Retryable` up to `policy.attempts` tries in all; re-raise the last."""
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except Retryable as error:
            if attempt == policy.attempts:
                raise
            wait = policy.delay(attempt, error.retry_after)
            if on_retry is not None:
                on_retry(attempt, wait, error)
            sleep(wait)
    raise AssertionError("unreachable")
