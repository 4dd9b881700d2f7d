"""Replies begun for the model: the start of the change it keeps not writing.

Shown the function it must implement, a small model plans "1. Read the docstring 2. Identify the
parts ..." and answers every step with `cat` of the same lines; told that reading them again moves
nothing on, it reads them again. Where the model can be made to go on from a given start (see
`Model.continues_replies`), its next reply begins with the edit itself: the file's path, the opening
of a code block and, for a Python definition it was shown, the definition's first lines down to its
docstring. What it writes from there is the body: the one thing it would not begin on its own.
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
class BegunChange:
    """The start of a reply that changes a file; `definition`: it holds the start of one definition
    (the block that follows is that definition's change, not the whole file)."""

    text: str
    definition: bool


def change_start(path: str, text: str, line: int | None) -> BegunChange | None:
    """The start of a reply that changes `path` (text `text`) where it is about line `line` (the first
    the model was shown, the one a failure names); None where `path` is no source file to change (data,
    a test)."""
    language = LANGUAGES.get(PurePosixPath(path).suffix)
    if language is None or is_test_file(path):
        return None
    head = _definition_head(text, line) if language == "python" and line is not None else ""
    if language == "bash":
        # A shell block is a command to run unless it starts as a script does.
        first = text.partition("\n")[0]
        interpreter = first if first.startswith("#!") else "#!/bin/bash"
        return BegunChange(render("begun/change", path=path, language="bash", head=f"{interpreter}\n"), False)
    return BegunChange(render("begun/change", path=path, language=language, head=head), bool(head))


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definition_head(text: str, line: int) -> str:
    """The first lines of the function that holds `line`, down to its docstring (or its signature,
    without one); for a method, its class's own line before them; for a class, the class's lines
    down to its docstring. "" where `line` is in no definition, or one written on one line."""
    tree = parse(text)
    if tree is None:
        return ""
    lines = text.splitlines()
    for node in tree.body:
        if not isinstance(node, Definition) or not _top(node) <= line <= (node.end_lineno or node.lineno):
            continue
        if isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, Definition) and _top(method) <= line <= (method.end_lineno or method.lineno):
                    signature = _lines(lines, _top(node), node.body[0].lineno - 1)
                    return signature + _head(lines, method) if signature else ""
        return _head(lines, node)
    return ""


def _top(node: Definition) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _head(lines: list[str], node: Definition) -> str:
    """`node`'s lines from its first (decorators included) down to its docstring or its signature,
    and the blank lines after its docstring (the file's own spacing, which the model keeps)."""
    body = node.body[0]
    docstring = isinstance(body, ast.Expr) and isinstance(getattr(body.value, "value", None), str)
    last = (body.end_lineno or body.lineno) if docstring else body.lineno - 1
    end = node.end_lineno or node.lineno
    while docstring and last < end and not lines[last].strip():
        last += 1
    return _lines(lines, _top(node), last)


def _lines(lines: list[str], first: int, last: int) -> str:
    """Lines `first` to `last` (1-based, inclusive) as text; "" where there are none (`def f(): ...`)."""
    return "".join(line + "\n" for line in lines[first - 1 : last]) if last >= first else ""
