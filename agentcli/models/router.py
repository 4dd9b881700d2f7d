"""A fallback chain behind the `Model` protocol: `--model A --fallback B --fallback local/qwen2.5-coder-1.5b`.

Each call goes to the first model of the chain that is not cooling down. A model that is unavailable once its
own retries are spent (quota exhausted, repeated 5xx, timeouts, an endpoint that does not answer) is set aside
for `cooldown` seconds and the call moves down the chain; once the cool-down is over the next call tries it
again, so the run moves back up. Errors that are the caller's (a prompt too long for the context window, a
request the provider rejects, a scripted model that ran out) are raised, not fallen back from: another model
would not fix them. Every move is reported to `on_switch`. Models below the first are created only when they
are first needed (loading a local model costs seconds and gigabytes)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentcli.errors import AgentcliError
from agentcli.models.base import (
    Message,
    Model,
    ModelError,
    ModelUnavailable,
    ModelWrapper,
    Reply,
    RequestRejected,
    StreamCallback,
)
from agentcli.models.stream import StreamRelay

DEFAULT_COOLDOWN = 300.0

# (from model, to model, why)
SwitchCallback = Callable[[str, str, str], None]


class ModelRouter(ModelWrapper):
    def __init__(
        self,
        first: Model,
        fallbacks: list[str],
        factory: Callable[[str], Model],
        *,
        cooldown: float = DEFAULT_COOLDOWN,
        on_switch: SwitchCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.names = [first.name, *fallbacks]
        self._models: list[Model | None] = [first, *([None] * len(fallbacks))]
        self.factory = factory
        self.cooldown = cooldown
        self.on_switch = on_switch
        self.clock = clock
        self.active = 0  # the index of the model that answered last
        self._down_until = [0.0] * len(self.names)
        self._why_down: list[str] = [""] * len(self.names)

    # The protocol, answered for the model in use.
    @property
    def model(self) -> Model:
        model = self._models[self.active]
        assert model is not None
        return model

    @property
    def wrapped(self) -> Model:
        return self.model

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_token: StreamCallback | None = None,
        temperature: float | None = None,
        prefix: str = "",
        grammar: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        relay = StreamRelay(on_token) if on_token is not None else None
        now = self.clock()
        ready = [i for i in range(len(self.names)) if self._down_until[i] <= now]
        # Every model cooling down: try them all in order rather than fail without asking any.
        order = ready or list(range(len(self.names)))
        failures: list[str] = []
        for index in order:
            model = self._model(index, failures)
            if model is None:
                continue
            self._switch_to(index)
            try:
                reply = model.complete(
                    messages,
                    max_tokens=max_tokens,
                    on_token=relay.attempt() if relay is not None else None,
                    temperature=temperature,
                    prefix=prefix,
                    grammar=grammar,
                    tools=tools,
                )
            except RequestRejected:
                raise
            except ModelUnavailable as error:
                why = str(error).removeprefix(f"{model.name}: ")  # a backend names itself: once is enough
                self._set_aside(index, why)
                failures.append(f"{self.names[index]}: {why}")
                continue
            self._down_until[index] = 0.0
            return reply
        raise ModelUnavailable("every model of the fallback chain failed: " + "; ".join(failures))

    def _model(self, index: int, failures: list[str]) -> Model | None:
        """The model at `index`, created on first use; None (and set aside) when it cannot be."""
        model = self._models[index]
        if model is not None:
            return model
        try:
            model = self.factory(self.names[index])
        except (AgentcliError, ModelError, OSError) as error:
            self._set_aside(index, f"cannot be loaded: {error}")
            failures.append(f"{self.names[index]}: cannot be loaded: {error}")
            return None
        self._models[index] = model
        return model

    def _set_aside(self, index: int, why: str) -> None:
        self._down_until[index] = self.clock() + self.cooldown
        self._why_down[index] = why

    def _switch_to(self, index: int) -> None:
        if index == self.active:
            return
        old = self.names[self.active]
        if index > self.active:
            why = (
                f"{old} unavailable ({self._why_down[self.active] or 'set aside'}); falling back to {self.names[index]}"
            )
        else:
            why = f"{self.names[index]} has cooled down ({self.cooldown:g}s): trying it again"
        self.active = index
        if self.on_switch is not None:
            self.on_switch(old, self.names[index], why)
