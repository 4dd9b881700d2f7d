"""Policy `at-top`: an append of what the task wants at the top of a file is inserted there (a small
model told to add a heading at the top of the changelog appends it)."""

from __future__ import annotations

import re
import shlex

from agentcli.agent.checking import appended_files
from agentcli.agent.edits import without_comment_lines
from agentcli.agent.guards.task_guard import NAMED_PATH, Read, TaskGuard, unquoted
from agentcli.prompts import render

_AT_TOP = re.compile(r"\b(?:at|to) the (?:top|beginning|start)\b|\bprepend", re.IGNORECASE)
_NOT_A_FILE = frozenset({"file", "it", "this", "that", "script", "module", "page", "document"})
_TOP_OF = re.compile(r"\b(?:of|in|to)\s+(?:the\s+)?`?([\w.-]+?)`?(?=[\s.,;:]|$)", re.IGNORECASE)
_LAST_NAMED = re.compile(r"(?:^|\s)`?([\w-]*\.?[\w-]+\.\w+|[A-Z][\w-]+)`?(?!.*\s`?[\w-]+\.\w+)", re.DOTALL)
_CLAUSE_END = re.compile(r"[,;]|\.(?:\s|$)|\band\b|\bthen\b")
_ECHO_APPEND = re.compile(r"^\s*(?:echo|printf)\s+(?:-e\s+)?(\S.*?)\s*>>\s*\S+\s*$")


def wanted_at_top(path: str, task: str) -> bool:
    """Whether the task asks for something at the top of `path`: named (its name or stem, "the
    changelog" for CHANGELOG.md) in the clause that says "at the top"."""
    name = path.rsplit("/", 1)[-1].lower()
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    for match in _AT_TOP.finditer(task):
        # The file "at the top of" names comes right after it; else the one before it in the clause.
        after = _CLAUSE_END.split(task[match.end() :], maxsplit=1)[0]
        before = _CLAUSE_END.split(task[: match.start()])[-1]
        candidates = [m.group(1).lower() for m in (_TOP_OF.search(after), _LAST_NAMED.search(before)) if m]
        files = [word for word in candidates if word not in _NOT_A_FILE]
        if files and files[0] in (name, stem):
            return True
        # "In notes.md, add a title at the top of the file": the one file the task names.
        if not files and {named.rsplit("/", 1)[-1].lower() for named, _ in NAMED_PATH.findall(task)} == {name}:
            return True
    return False


def at_top(command: str, task: str, read: Read) -> tuple[str | None, str] | None:
    """An append where the task wants the text at the top: the `sed` that inserts it there (above the
    first heading of its level in Markdown, a changelog's newest entry; else above line 1), None
    where the appended text is not one echoed line, and why; None for other commands."""
    appended = appended_files(command)
    if len(appended) != 1 or not wanted_at_top(appended[0], task) or (text := read(appended[0])) is None:
        return None
    path = appended[0]
    appending = without_comment_lines(command).strip()
    echoed = _ECHO_APPEND.match(appending) if "\n" not in appending else None
    why = render("placement/at_top", path=path, quoted_path=shlex.quote(path), no_command=echoed is None)
    if echoed is None:
        return None, why
    line = unquoted(echoed.group(1))
    number = 2 if text.startswith("#!") else 1  # an interpreter line stays the first
    if level := re.match(r"#+ ", line):
        number = next((i for i, old in enumerate(text.splitlines(), 1) if old.startswith(level.group(0))), 1)
    return f"sed -i {shlex.quote(f'{number}i {line}')} {shlex.quote(path)}", why


GUARD = TaskGuard("at-top", place=at_top)
