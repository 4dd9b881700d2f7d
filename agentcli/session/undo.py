"""Take a run back: the checkpointed state returns, and what the run created in ignored paths goes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agentcli.errors import UsageError
from agentcli.repo import checkpoint as cp
from agentcli.repo import mirror
from agentcli.session.journal import sessions_dir

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


def undo_root(path: Path) -> Path:
    """The repository to undo in, from `path`: the git work tree it is in, or the nearer folder agentcli
    keeps checkpoints of, whose git data a run destroyed."""
    if not path.is_dir():
        raise UsageError(f"repository path is not a directory: {path}")
    path = path.resolve()
    found = cp.find_repo_root(path)
    for candidate in [path, *path.parents]:
        if candidate == found or mirror.repository(candidate) is not None:
            return candidate
    raise UsageError(f"{path} is not inside a git repository agentcli has run in")


def undo(root: Path, session: str | None = None) -> UndoReport:
    checkpoint = cp.load_checkpoint(root, session)
    restored = cp.restore(root, checkpoint)
    removed: list[str] = []
    record = sessions_dir(root) / checkpoint.name / IGNORED_RECORD
    if record.is_file():
        data = json.loads(record.read_text())
        removed = cp.remove_created_ignored(root, checkpoint, set(data["before"]), set(data["after"]))
    ref = f"{cp.CHECKPOINT_REFS}/{checkpoint.name}"
    cp.Git(root).try_("update-ref", "-d", ref)
    mirror.forget(root, checkpoint.name, ref)
    return UndoReport(checkpoint.name, restored, removed)
