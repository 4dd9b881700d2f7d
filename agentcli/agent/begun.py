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
from pathlib import PurePosixPath

from agentcli.agent.pysource import parse
from agentcli.agent.tracebacks import is_test_file

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


def change_start(path: str, text: str, first_line: int | None) -> str | None:
    """The start of a reply that changes `path` (text `text`), of which the model was shown the lines
    from `first_line` on; None where `path` is no source file to change (data, a test)."""
    language = LANGUAGES.get(PurePosixPath(path).suffix)
    if language is None or is_test_file(path):
        return None
    start = f"{path}\n```{language}\n"
    if language == "python" and first_line is not None:
        start += _definition_head(text, first_line)
    return start


def _definition_head(text: str, first_line: int) -> str:
    """The lines of the top-level function or class shown from `first_line`, from its first line down
    to its docstring (or its signature, without one); "" where no definition starts there."""
    tree = parse(text)
    if tree is None:
        return ""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if top != first_line:
            continue
        body = node.body[0]
        docstring = isinstance(body, ast.Expr) and isinstance(getattr(body.value, "value", None), str)
        last = (body.end_lineno or body.lineno) if docstring else body.lineno - 1
        if last < top:  # `def f(): return 1`, the body on the signature's line
            return ""
        return "".join(line + "\n" for line in text.splitlines()[top - 1 : last])
    return ""
