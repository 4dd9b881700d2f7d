"""The journal: every event on disk as it happens; a line cut short by a kill costs only that line."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.events import CommandFinished, Notice, RunStarted
from agentcli.session.journal import Journal, read_events, sessions_dir


def test_events_are_on_disk_as_they_happen_and_a_torn_last_line_is_skipped(tmp_path: Path):
    journal = Journal(tmp_path, "s1")
    journal(RunStarted(session_id="s1", task="t", model="m", sandbox="host", workdir=str(tmp_path)))
    journal(Notice(message="hello"))
    finished = CommandFinished(1, "ls", 0, "a\n", 0.1, 2, False, None, False, False)
    journal(finished)
    # Read while the journal is still open, as a crash would leave it.
    path = sessions_dir(tmp_path) / "s1" / "events.jsonl"
    assert [e["type"] for e in read_events(path)] == ["run_started", "notice", "command_finished"]
    with open(path, "a") as f:  # a write cut short by SIGKILL
        f.write(json.dumps({"type": "notice", "message": "cut"})[:15])
    assert [e["type"] for e in read_events(path)] == ["run_started", "notice", "command_finished"]
    journal.close()


def test_the_journal_is_outside_the_repository(tmp_path: Path):
    journal = Journal(tmp_path / "repo", "s2")
    journal.close()
    assert not (tmp_path / "repo").exists() or not any((tmp_path / "repo").iterdir())
    assert journal.path.is_file() and not journal.path.is_relative_to(tmp_path / "repo")


def test_a_journal_reopened_after_a_torn_line_starts_a_fresh_one(tmp_path: Path):
    """`agentcli resume`-style appends after a kill: the torn line is lost, the next event is not."""
    journal = Journal(tmp_path, "s3")
    journal(Notice(message="before"))
    journal.close()
    with open(journal.path, "a") as f:
        f.write('{"type": "notice", "mess')
    again = Journal(tmp_path, "s3")
    again(Notice(message="after"))
    again.close()
    assert [e.get("message") for e in read_events(again.path)] == ["before", "after"]
