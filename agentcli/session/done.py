"""Checks a "done" must pass that look at the repository: what the task changed, left broken, empty
or staged and uncommitted, and whether the tests and the docstring examples still fail. Each is a
policy (`agentcli policies`); each returns the objection the model is sent, or None.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.pysource import syntax_error
from agentcli.agent.tracebacks import excerpt, is_test_file
from agentcli.prompts import render
from agentcli.repo import checkpoint as cp
from agentcli.repo.overview import list_files
from agentcli.repo.shebang import HEAD_BYTES
from agentcli.sandbox.base import Sandbox
from agentcli.session.checks import (
    MAX_PIPED_SCRIPT,
    Script,
    broken_shell,
    failed_ids,
    failing_examples,
    failing_tests,
    has_examples,
    shell_of,
    test_command,
)
from agentcli.session.data_files import data_parser

Notify = Callable[[str], None]
# Puts back what the block changes in the work tree (`Session.tree_kept`).
TreeKept = Callable[[], AbstractContextManager[list[str]]]


@dataclass
class TaskState:
    """What the checks know of the task at hand: the repository and its state before the task."""

    root: Path
    checkpoint: cp.Checkpoint | None
    failing_before: str | None = None  # how the tests failed before a task that does not speak of them


def nothing_changed(s: TaskState) -> str | None:
    """An objection to "done" when the current task has changed no file and made no commit (asked
    once per task; a commit that only stops tracking a file changes none)."""
    if s.checkpoint is None or cp.changed_paths(s.root, s.checkpoint):
        return None
    if cp.moved_since(s.root, s.checkpoint):
        return None
    # Said done after only looking, a small model needs the way to make a change as much as the news.
    return render("objections/nothing_changed")


def empty_new_file(s: TaskState) -> str | None:
    """An objection to "done" while a file the task created is empty (`touch` taken for the work)."""
    if s.checkpoint is None:
        return None
    for status, path in cp.changed_paths(s.root, s.checkpoint):
        found = untrusted.lstat(s.root, path)
        if status == "A" and found is not None and stat.S_ISREG(found.st_mode) and found.st_size == 0:
            return render("objections/empty_new_file", path=path)
    return None


def broken_python(s: TaskState) -> str | None:
    """An objection to "done" while a Python file the task changed no longer parses."""
    if s.checkpoint is None:
        return None
    for status, path in cp.changed_paths(s.root, s.checkpoint):
        if status == "D" or not path.endswith(".py") or (text := untrusted.try_read_text(s.root, path)) is None:
            continue
        if (e := syntax_error(text)) is not None:
            shown = excerpt(text, e.lineno or 0)
            return render("objections/broken_python", path=path, error=e.msg, line=e.lineno, shown=shown)
    return None


def broken_data(s: TaskState) -> str | None:
    """An objection to "done" while a JSON or TOML file the task created or changed does not parse (one
    that did not parse before the task either, such as JSON with comments, is left alone)."""
    if s.checkpoint is None:
        return None
    for status, path in cp.changed_paths(s.root, s.checkpoint):
        if status == "D" or (parse := data_parser(path)) is None:
            continue
        if (text := untrusted.try_read_text(s.root, path)) is None or (error := parse(text)) is None:
            continue
        before = cp.content_at(s.root, s.checkpoint, path, untrusted.TEXT_LIMIT) if status != "A" else None
        if before is not None and parse(before.decode(errors="replace")) is not None:
            continue
        message, line = error
        kind = "JSON" if path.endswith(".json") else "TOML"
        return render("objections/broken_data", path=path, kind=kind, error=message, shown=excerpt(text, line))
    return None


def broken_shell_now(s: TaskState, sandbox: Sandbox | None) -> str | None:
    """An objection to "done" while a shell script the task changed does not parse (`bash -n` in the
    sandbox, which reads the script and runs none of it)."""
    if s.checkpoint is None or sandbox is None:
        return None
    scripts = []
    copied: dict[str, str] | None = None
    for status, path in cp.changed_paths(s.root, s.checkpoint):
        if status == "D":
            continue
        try:
            head = untrusted.read_bytes(s.root, path, HEAD_BYTES)
        except OSError:
            continue
        if (shell := shell_of(path, head)) is None:
            continue
        was = path
        if status == "A":  # new, or a script moved or copied (and perhaps changed): judged by its source
            if broken_shell(sandbox, [Script(path, shell, None)]) is None:
                continue  # it parses: where it came from does not matter (and finding that costs)
            copied = cp.copied_from(s.root, s.checkpoint) if copied is None else copied
            was = copied.get(path, "")
        before = None
        if was:
            before = cp.content_at(s.root, s.checkpoint, was, MAX_PIPED_SCRIPT)
            if before is None:
                continue  # too big to compare with, or unreadable: whether the task broke it is unknown
            if status == "A" and shell_of(was, before[:HEAD_BYTES]) is None:
                before = None  # made from a file that was no script (a text turned into one): new
        scripts.append(Script(path, shell, before))
    return broken_shell(sandbox, scripts)


def staged_not_committed(s: TaskState) -> str | None:
    """An objection to "done" when the task staged changes and left them uncommitted: a git chore
    stopped halfway (small models take `git add` for the commit)."""
    if s.checkpoint is None:
        return None
    staged = cp.staged_since(s.root, s.checkpoint)
    if not staged:
        return None
    return render("objections/staged_not_committed", staged=staged)


def failing_tests_now(s: TaskState, sandbox: Sandbox | None, notify: Notify, kept: TreeKept) -> str | None:
    """An objection to "done" while the repository's own tests fail; none where they fail only as
    they failed before a task that does not speak of them (policy `failing-before`)."""
    command = test_command(list_files(s.root), every=s.failing_before is not None)
    if command is None or sandbox is None:
        return None
    notify(f"checking before finishing: {command}")
    with kept():  # what the tests write is not the task's change
        failure = failing_tests(sandbox, command)
    if failure and s.failing_before and failed_ids(failure) <= failed_ids(s.failing_before):
        return None  # they failed so before the task, which does not speak of them
    return failure


def failing_examples_now(s: TaskState, sandbox: Sandbox | None, notify: Notify, kept: TreeKept) -> str | None:
    """An objection to "done" while the docstring examples of a Python file the task changed fail."""
    if s.checkpoint is None or sandbox is None:
        return None
    changed = [
        path
        for status, path in cp.changed_paths(s.root, s.checkpoint)
        if status != "D" and path.endswith(".py") and not is_test_file(path)
    ]
    with_examples = [path for path in changed if has_examples(untrusted.try_read_text(s.root, path) or "")]
    if with_examples:
        notify(f"checking before finishing: the examples in {', '.join(with_examples)}")
    with kept():
        return failing_examples(sandbox, with_examples)


def repository_checks(state: Callable[[], TaskState]) -> list[DoneCheck]:
    """The checks that read only the repository and the task as it stands (`state()`), in order."""
    return [
        DoneCheck("unchanged", lambda: nothing_changed(state()), code=True),
        DoneCheck("syntax", lambda: broken_python(state()), gist_end=" ("),
        DoneCheck("data-syntax", lambda: broken_data(state()), gist_end=" ("),
        DoneCheck("empty", lambda: empty_new_file(state()), gist_end=":"),
        DoneCheck("staged", lambda: staged_not_committed(state()), gist_end=" ("),
    ]
