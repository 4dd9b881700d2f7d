"""Take a run back: the checkpointed state returns, and what the run created in ignored paths goes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agentcli.repo import checkpoint as cp
from agentcli.session.journal import SESSIONS_DIR

IGNORED_RECORD = "ignored.json"


@dataclass
class UndoReport:
    session: str
    restored: list[str]
    removed_ignored: list[str]


def record_ignored(root: Path, session_dir: Path, before: set[str]) -> None:
    """At the end of a run, note which ignored entries existed before and after it."""
    after = cp.ignored_entries(root)
    (session_dir / IGNORED_RECORD).write_text(json.dumps({"before": sorted(before), "after": sorted(after)}))


def undo(root: Path, session: str | None = None) -> UndoReport:
    checkpoint = cp.load_checkpoint(root, session)
    restored = cp.restore(root, checkpoint)
    removed: list[str] = []
    record = root / SESSIONS_DIR / checkpoint.name / IGNORED_RECORD
    if record.is_file():
        data = json.loads(record.read_text())
        removed = cp.remove_created_ignored(root, set(data["before"]), set(data["after"]))
    cp.Git(root)("update-ref", "-d", f"{cp.CHECKPOINT_REFS}/{checkpoint.name}")
    return UndoReport(checkpoint.name, restored, removed)
