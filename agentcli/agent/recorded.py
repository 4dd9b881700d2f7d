"""The sandbox as the journal sees it: every command run beside the model's own (a check on DONE, a
guard's, a candidate change and its checks, the user's `!command`) becomes a `SideCommand` event, so a
run's journal holds every command anything ran. The model's own commands and the first looks are
journaled as `CommandStarted`/`CommandFinished` by their callers, inside `journaled_as_command`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from agentcli.events import Event, SideCommand
from agentcli.sandbox.base import Observation, Sandbox

# Characters of a check's output kept in its event: enough to see why it failed.
OUTPUT_KEPT = 2000


class RecordedSandbox:
    """`inner`, with an event for each command run through it outside `journaled_as_command`."""

    def __init__(self, inner: Sandbox, emit: Callable[[Event], None]):
        self.inner, self.emit = inner, emit
        self._elsewhere = False

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def __enter__(self) -> RecordedSandbox:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.__exit__(*exc)

    def run(self, command: str, timeout: float | None = None) -> Observation:
        obs = self.inner.run(command, timeout=timeout)
        if not self._elsewhere:
            self.emit(
                SideCommand(
                    command=command,
                    exit_code=obs.exit_code,
                    output=obs.output[:OUTPUT_KEPT],
                    duration=round(obs.duration, 3),
                    timed_out=obs.timed_out,
                )
            )
        return obs

    @contextlib.contextmanager
    def journaled_elsewhere(self) -> Iterator[None]:
        self._elsewhere = True
        try:
            yield
        finally:
            self._elsewhere = False


def journaled_as_command(sandbox: Sandbox) -> contextlib.AbstractContextManager[None]:
    """The block's command is journaled by its caller (`CommandStarted`, `CommandFinished`)."""
    return sandbox.journaled_elsewhere() if isinstance(sandbox, RecordedSandbox) else contextlib.nullcontext()
