"""Notice an agent going round in circles: first a nudge, then a stop with a clear reason."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from agentcli.prompts import render

# Timings, addresses and counters differ between runs of the same command: `added 3`, then `added 4`
# from a command sent over and over with another in between is the same going round.
_VOLATILE = re.compile(r"\b0x[0-9a-fA-F]+\b|\d+(?:\.\d+)?")


@dataclass
class StuckDetector:
    """Watches (command, output) pairs.

    Patterns: the same command with the same output (numbers aside) `repeats` times in a row; two
    or three commands going round with outputs unchanged but for numbers for `alternations` rounds;
    `error_streak` failing commands in a row. The first time a pattern shows, `check` returns
    ("nudge", why); if it shows again after that nudge, ("stop", why).
    """

    repeats: int = 3
    alternations: int = 3
    error_streak: int = 6
    _history: list[tuple[str, str, int]] = field(default_factory=list)
    _nudged: set[str] = field(default_factory=set)
    _errors_since_nudge: int = 0

    def record(self, command: str, output: str, exit_code: int) -> None:
        steady = _VOLATILE.sub("#", output)
        digest = hashlib.sha1(steady.encode(errors="replace")).hexdigest()
        self._history.append((command.strip(), digest, exit_code))

    def check(self) -> tuple[str, str] | None:
        reason = self._pattern()
        if reason is None:
            return None
        kind = reason.split(":", 1)[0]
        if kind in self._nudged:
            return "stop", reason
        self._nudged.add(kind)
        if kind == "errors":
            self._errors_since_nudge = 0
        return "nudge", reason

    def _pattern(self) -> str | None:
        h = self._history
        n = self.repeats
        if len(h) >= n and len({(c, d) for c, d, _ in h[-n:]}) == 1:
            return f"repeat: the same command gave the same output {n} times in a row"
        for period, how in ((2, "two commands alternated"), (3, "three commands went round")):
            window = [(c, d) for c, d, _ in h[-period * self.alternations :]]
            cycle = window[:period]
            going_round = all(step == cycle[i % period] for i, step in enumerate(window))
            if len(window) == period * self.alternations and len(set(cycle)) == period and going_round:
                return f"alternating: {how} {self.alternations} times with unchanged output"
        streak = 0
        for _, _, code in reversed(h):
            if code == 0:
                break
            streak += 1
        threshold = self.error_streak if "errors" not in self._nudged else self.error_streak + 4
        if streak >= threshold:
            return f"errors: {streak} commands in a row failed"
        if streak == 0:
            self._nudged.discard("errors")
        return None

    @staticmethod
    def advice(reason: str) -> str:
        """What the model is told of a nudge: the pattern seen (`reason`), and the way out of it."""
        kind = reason.split(":", 1)[0]
        return render("nudges/stuck", kind=kind, reason=reason.split(": ", 1)[1])
