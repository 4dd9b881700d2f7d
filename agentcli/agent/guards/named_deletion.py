"""Policy `named-deletion`: a file the task names is not deleted unless the task asks for it (told to stop
tracking `debug.log`, or to make `wordcount.py` runnable, a small model deletes it); a `git rm` of such
a file becomes `git rm --cached`, which keeps it on disk."""

from __future__ import annotations

import re

from agentcli.agent.checking import removed_files
from agentcli.agent.guards.task_guard import Read, TaskGuard
from agentcli.prompts import render

# What says a file goes without a verb for it: "old_utils.py is obsolete".
_GOES = re.compile(r"\b(?:obsolete|unused|no longer (?:used|needed)|dead code|deprecated|stale|leftover)\b", re.I)
# Words of a task that asks for a tracked file to stay on disk.
_STOP_TRACKING = re.compile(r"\b(?:stop tracking|untrack|no longer track)", re.IGNORECASE)
# A verb that asks for a file to go: its object within the clause is a file the task deletes.
_DELETES = r"\b(?:delete|remove|rm|erase|drop|replace|rename|move|get rid of)\b[^.;,]*?"
_GIT_RM = re.compile(r"\bgit\s+rm\b(?![^\n]*--cached)")
_PLAIN_RM = re.compile(r"(?:^|[;&|]\s*|\n\s*)rm\s")


def named_deletion(command: str, task: str) -> tuple[str, str] | None:
    """A file `command` deletes that the task names and says to keep (or to stop tracking), or names
    with nothing saying it goes, and why it stays; None otherwise. Replacing a file, or dropping an
    obsolete one, is a deletion the task asks for in other words."""
    for path in removed_files(command):
        name = path.rstrip("/").removeprefix("./")
        named = rf"(?<![\w./-])`?{re.escape(name)}`?(?![\w/-])"
        if not name or not re.search(named, task):
            continue
        # "keep it", "keep the file", "keep debug.log": the keeping is said of this file.
        keep = re.search(rf"\bkeep\s+(?:it|them|the files?|(?:the\s+)?{named})", task, re.IGNORECASE)
        if keep or _STOP_TRACKING.search(task):
            return name, render("placement/named_file_stays", name=name, said_to_keep=True)
        if not re.search(_DELETES + named, task, re.IGNORECASE) and not _GOES.search(task):
            # The file the task is about.
            return name, render("placement/named_file_stays", name=name, said_to_keep=False)
    return None


def kept_on_disk(command: str, task: str, read: Read) -> tuple[str | None, str] | None:
    """`git rm` of a file the task names and says to keep: the same command with `git rm --cached`,
    which keeps the file, and why."""
    if not _GIT_RM.search(command) or _PLAIN_RM.search(_GIT_RM.sub("", command)):
        return None
    kept = named_deletion(command, task)
    if kept is None:
        return None
    why = render("placement/untracked_instead", why=kept[1])
    return _GIT_RM.sub("git rm --cached", command), why


def refuse(command: str, task: str, read: Read) -> str | None:
    named = named_deletion(command, task)
    return render("refusals/named_deletion", why=named[1]) if named is not None else None


GUARD = TaskGuard("named-deletion", refuse=refuse, place=kept_on_disk)
