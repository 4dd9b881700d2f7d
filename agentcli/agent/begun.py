"""Replies begun for the model: the start of the change it keeps not writing.

Shown the function it must implement, a small model plans "1. Read the docstring 2. Identify the
parts ..." and answers every step with `cat` of the same lines; told that reading them again moves
nothing on, it reads them again. Where the model can be made to go on from a given start (see
`Model.continues_replies`), its next reply begins with the edit itself: the file's path, the opening
of a code block and, for a Python definition it was shown, the definition's decorators and keyword
(`def`, `class`; a method's class line first). What it writes from there is the definition: its
name and signature are its own to change (a rename, a new parameter, a default), and a top-level
definition written under another name replaces the one begun (see agent.edits).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentcli.agent.pysource import parse
from agentcli.agent.tracebacks import is_test_file
from agentcli.prompts import render

# Reads of one file: `cat F`, `head F`, `cat -n F | sed -n '16,30p'`, `sed -n '16,30p' F`.
_READ = re.compile(
    r"^(?:(?:cat|head|tail|nl|less|more)(?:\s+-\S+(?:\s+\d+)?)*\s+(?P<path>[\w./-]+)"
    r"(?:\s*\|\s*sed -n '(?P<from>\d+),\d+p')?"
    r"|sed -n '(?P<sed_from>\d+),\d+p' (?P<sed_path>[\w./-]+))$"
)
# The code block language for the source files a change can be begun in, by suffix.
LANGUAGES = {".py": "python", ".sh": "bash", ".bash": "bash", ".js": "javascript", ".ts": "typescript"}


def read_file(command: str) -> tuple[str, int | None] | None:
    """The repository file `command` only reads, and the first line it shows where it shows a range."""
    match = _READ.match(command.strip())
    if match is None:
        return None
    path = match.group("path") or match.group("sed_path")
    first = match.group("from") or match.group("sed_from")
    return path.removeprefix("./"), int(first) if first else None


@dataclass(frozen=True)
class BegunDefinition:
    """The definition a reply was begun with: the block that follows is its change, not the whole
    file. `name`: a top-level definition's, which the block's first definition replaces."""

    path: str
    name: str = ""


@dataclass(frozen=True)
class BegunChange:
    """The start of a reply that changes a file; `definition`: the one definition it begins, if any."""

    text: str
    definition: BegunDefinition | None = None


def change_start(path: str, text: str, line: int | None) -> BegunChange | None:
    """The start of a reply that changes `path` (text `text`) where it is about line `line` (the first
    the model was shown, the one a failure names); None where `path` is no source file to change (data,
    a test)."""
    language = LANGUAGES.get(PurePosixPath(path).suffix)
    if language is None or is_test_file(path):
        return None
    if language == "bash":
        # A shell block is a command to run unless it starts as a script does.
        first = text.partition("\n")[0]
        interpreter = first if first.startswith("#!") else "#!/bin/bash"
        return BegunChange(render("begun/change", path=path, language="bash", head=f"{interpreter}\n"))
    head, name = _definition_head(text, line) if language == "python" and line is not None else ("", "")
    start = render("begun/change", path=path, language=language, head=head)
    return BegunChange(start, BegunDefinition(path, name) if head else None)


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definition_head(text: str, line: int) -> tuple[str, str]:
    """The start of the definition that holds `line`: its decorators and keyword, for a method its
    class's own line before them; and the definition's name where it is a top-level one. ("", "")
    where `line` is in no definition, or one written on one line."""
    tree = parse(text)
    if tree is None:
        return "", ""
    lines = text.splitlines()
    for node in tree.body:
        if not isinstance(node, Definition) or not _top(node) <= line <= (node.end_lineno or node.lineno):
            continue
        if node.body[0].lineno == node.lineno:
            return "", ""
        if isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, Definition) and _top(method) <= line <= (method.end_lineno or method.lineno):
                    signature = _lines(lines, _top(node), node.body[0].lineno - 1)
                    return (signature + _keyword(lines, method), "") if signature else ("", "")
        return _keyword(lines, node), node.name
    return "", ""


def _top(node: Definition) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _keyword(lines: list[str], node: Definition) -> str:
    """`node`'s decorators and its line up to its keyword (`    async def`): the rest is the model's.
    Not the space after it: the model's next token carries its own (` compute_total`), and a begun
    reply ending in a space made it write `def  compute_total`."""
    at = lines[node.lineno - 1]
    keyword = re.match(r"\s*(?:async\s+def|def|class)(?=\s)", at)
    return _lines(lines, _top(node), node.lineno - 1) + (keyword.group(0) if keyword else "")


def _lines(lines: list[str], first: int, last: int) -> str:
    """Lines `first` to `last` (1-based, inclusive) as text; "" where there are none (`def f(): ...`)."""
    return "".join(line + "\n" for line in lines[first - 1 : last]) if last >= first else ""
