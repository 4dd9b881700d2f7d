"""Policy `version-history`: a version bump's `sed -i` spares the changelog, whose old version is the
history of that release."""

from __future__ import annotations

import re
import shlex

from agentcli.agent.edits import sed_targets, without_comment_lines
from agentcli.agent.guards.task_guard import Read, TaskGuard
from agentcli.prompts import render

# "bump the version from 1.4.2 to 1.5.0": the old version stays in the history of releases.
_VERSION_BUMP = re.compile(r"\bfrom\s+`?v?(\d+(?:\.\d+)+)`?\s+to\s+`?v?\d+(?:\.\d+)+", re.IGNORECASE)
_HISTORY_FILE = re.compile(r"(?:^|/)(?:change(?:s|log)|history|news|releases?)(?:\.\w+)?$", re.IGNORECASE)


def without_history(command: str, task: str, read: Read) -> tuple[str | None, str] | None:
    """A version bump's `sed -i` over the changelog: the same `sed` without it (None where it edits
    nothing else), and why; None for other commands."""
    bump = _VERSION_BUMP.search(task)
    targets = sed_targets(command)
    history = [path for path in targets if _HISTORY_FILE.search(path)]
    if bump is None or not history or bump.group(1) not in command:
        return None
    why = render("placement/version_history", path=history[0], version=bump.group(1))
    if len(history) == len(targets):
        return None, why
    sed = shlex.split(without_comment_lines(command))
    return shlex.join(word for word in sed if word not in history), why


GUARD = TaskGuard("version-history", place=without_history)
