"""Streamed text shown once, however many times a reply is begun again (a retry, a fallback model)."""

from __future__ import annotations

from agentcli.models.base import StreamCallback


class StreamRelay:
    """Passes streamed pieces on to `on_token`, each part of the reply at most once.

    A stream cut half-way and tried again starts from the beginning: what repeats the text already passed on
    is swallowed and only what goes beyond it is passed on. A new try that says something else (another model,
    a sampled reply) is not shown at all: the screen already holds the start of the old one, and the
    finished reply reaches the listeners in full through the run's events."""

    def __init__(self, on_token: StreamCallback):
        self.on_token = on_token
        self.shown = ""

    def attempt(self) -> StreamCallback:
        """The callback for one try."""
        so_far = ""
        diverged = False

        def relay(piece: str) -> bool:
            nonlocal so_far, diverged
            if diverged:
                return False
            so_far += piece
            if len(so_far) <= len(self.shown):
                diverged = not self.shown.startswith(so_far)
                return False
            if not so_far.startswith(self.shown):
                diverged = True
                return False
            new, self.shown = so_far[len(self.shown) :], so_far
            return bool(self.on_token(new))

        return relay

    def deliver(self, text: str) -> None:
        """A reply that did not stream (served from a cache): passed on once, less what was already shown."""
        if not self.shown:
            self.shown = text
            if text:
                self.on_token(text)
        elif text.startswith(self.shown) and len(text) > len(self.shown):
            new, self.shown = text[len(self.shown) :], text
            self.on_token(new)
