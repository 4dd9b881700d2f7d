"""The sandbox as the journal sees it: every command run beside the model's own (a check on DONE, a
guard's, a candidate change and its checks, the user's `!command`) becomes a `SideCommand` event, so a
run's journal holds every command anything ran. The model's own commands and the first looks are
journaled as `CommandStarted`/`CommandFinished` by their callers, inside `journaled_as_command`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from agentcli.events import Event, SideCommand
from agentcli.sandbox.base import Observation, Sandbox

# Characters of a side command's output kept in its event, half from each end (a test run's summary is
# its last lines), and of the command itself (a candidate's heredoc, a restored shell state).
OUTPUT_KEPT = 2000
COMMAND_KEPT = 4000


def _ends(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]}\n[...]\n{text[-limit // 2 :]}"


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
        started = time.monotonic()
        try:
            obs = self.inner.run(command, timeout=timeout)
        except BaseException:  # an interrupt, a shell that died: the command still ran
            if not self._elsewhere:
                self._record(command, -1, "(stopped before it finished)", time.monotonic() - started, False)
            raise
        if not self._elsewhere:
            self._record(command, obs.exit_code, obs.output, obs.duration, obs.timed_out)
        return obs

    def _record(self, command: str, exit_code: int, output: str, duration: float, timed_out: bool) -> None:
        self.emit(
            SideCommand(
                command=_ends(command, COMMAND_KEPT),
                exit_code=exit_code,
                output=_ends(output, OUTPUT_KEPT),
                duration=round(duration, 3),
                timed_out=timed_out,
            )
        )

    @contextlib.contextmanager
    def journaled_elsewhere(self) -> Iterator[None]:
        outer, self._elsewhere = self._elsewhere, True
        try:
            yield
        finally:
            self._elsewhere = outer


def journaled_as_command(sandbox: Sandbox) -> contextlib.AbstractContextManager[None]:
    """The block's command is journaled by its caller (`CommandStarted`, `CommandFinished`)."""
    return sandbox.journaled_elsewhere() if isinstance(sandbox, RecordedSandbox) else contextlib.nullcontext()
