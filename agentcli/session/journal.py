"""Every event of a session, appended to JSON Lines and flushed, so a killed run loses nothing; at the
end of each step (a reply, a command's result, the run's result) the file is also synced to disk, so
a power cut loses at most the step under way."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

from agentcli.events import CommandFinished, Event, FormatError, ModelReplied, RunFinished
from agentcli.paths import repo_state_dir


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


# Events that end a step: the journal is synced to disk after each.
STEP_ENDS = (ModelReplied, CommandFinished, FormatError, RunFinished)


def sessions_dir(root: Path) -> Path:
    """Where the sessions run in the repository at `root` are kept: agentcli's state folder, never
    the repository, which the sandbox can write."""
    return repo_state_dir(root) / "sessions"


class Journal:
    """`<state>/repos/<repo>/sessions/<id>/events.jsonl`; the control channel (`commands/`) lives beside it."""

    def __init__(self, root: Path, session_id: str):
        self.session_id = session_id
        self.dir = sessions_dir(root) / session_id
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = self.dir / "events.jsonl"
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - open for the session
        if self._file.tell() and not _ends_a_line(self.path):  # a line torn by a kill stays alone
            self._file.write("\n")

    @property
    def commands_dir(self) -> Path:
        return self.dir / "commands"

    def __call__(self, event: Event) -> None:
        if not event.journaled or self._file.closed:
            return
        self._file.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self._file.flush()
        if isinstance(event, STEP_ENDS):
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _ends_a_line(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def read_events(path: Path) -> list[dict]:
    """The events of a journal; a line cut short by a kill is skipped."""
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
