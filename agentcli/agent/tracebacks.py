"""Where in the repository a failure happened, from the error a command printed.

A traceback names a file and a line; a small model then has to think of reading that file, find
the line, and often misreads it. Showing the lines around it with the failure puts the cause in
front of the model at once.
"""

from __future__ import annotations

import ast
import builtins
import posixpath
import re
from collections.abc import Callable

from agentcli.agent.pysource import parse
from agentcli.prompts import render

# Python: `  File "/work/report/summary.py", line 15, in revenue_by_customer`; also in pytest's `E`
# lines, where a SyntaxError of an imported module says where it is.
_PYTHON_FRAME = re.compile(r'^(?:E)?\s*File "([^"]+)", line (\d+)', re.MULTILINE)
# pytest --tb=short and --tb=line: `pager.py:7: in paginate`, `test_pager.py:12: AssertionError`
_PYTEST_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): ", re.MULTILINE)
# bash: `backup.sh: line 5: cd: my: No such file or directory`
_SHELL_FRAME = re.compile(r"^([\w./-]+\.(?:sh|bash)): line (\d+): ", re.MULTILINE)
CONTEXT_LINES = 4
# A Python test module as pytest collects it by default.
TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")
# Test helpers and data live beside them in a tests/ folder: code to fix is never there.
_TEST_FOLDER = re.compile(r"(?:^|/)tests?/")


def is_test_file(path: str) -> bool:
    """Whether `path` belongs to the tests: a test module or anything in a tests/ folder."""
    return TEST_FILE.search(path) is not None or _TEST_FOLDER.search(path) is not None


def failure_location(
    output: str, workdir: str, exists: Callable[[str], bool], shell_folder: str | None = "."
) -> tuple[str, int] | None:
    """(path relative to `workdir`, line) of the innermost frame in the repository's own code; a frame's
    relative path is from `shell_folder` (where the command ran, relative to `workdir`; None: outside it).

    A frame in code under test wins over one in a test file: the assertion is where a failure shows,
    the code it calls is where it comes from.
    """
    frames: list[tuple[str, int]] = []
    for pattern in (_PYTHON_FRAME, _PYTEST_FRAME, _SHELL_FRAME):
        for match in pattern.finditer(output):
            path = _relative(match.group(1), workdir, shell_folder)
            if path is not None and exists(path):
                frames.append((path, int(match.group(2))))
        if frames:
            break
    if not frames:
        return None
    code = [frame for frame in frames if not is_test_file(frame[0])]
    return (code or frames)[-1]


def _relative(path: str, workdir: str, shell_folder: str | None) -> str | None:
    prefix = workdir.rstrip("/") + "/"
    if path.startswith(prefix):
        path = path[len(prefix) :]
    elif path.startswith("/") or shell_folder is None:
        return None
    elif shell_folder != ".":
        path = posixpath.normpath(posixpath.join(shell_folder, path))
    path = path.removeprefix("./")
    if "site-packages/" in path or path.startswith(("..", "<")):
        return None
    return path


# A frame in Python's own library or an installed package (pytest's import machinery above a test
# module that fails to import): a location, then its indented source lines. `<frozen importlib._bootstrap>`.
_LIBRARY = r"(?:[^\s\"]*(?:site-packages|dist-packages|/lib/python3[.\d]*)/[^\s\"]*|<frozen [^>]+>)"
_LIBRARY_FRAMES = re.compile(
    rf'^(?:{_LIBRARY}:\d+: in \S+|[ \t]*File "{_LIBRARY}", line \d+, in \S+)\n(?:[ \t]{{4,}}\S.*\n?)*',
    re.MULTILINE,
)


def without_library_frames(output: str) -> str:
    """`output` with the traceback frames in Python's library and installed packages left out: a
    test module that cannot be imported comes with a dozen frames of importlib and pytest above the
    one line that matters, and a small model reads the first lines."""
    dropped = len(_LIBRARY_FRAMES.findall(output))
    if dropped < 2:
        return output
    marker = [render("observation/frames_left_out", count=dropped)]
    return _LIBRARY_FRAMES.sub(lambda _: marker.pop() if marker else "", output)


def excerpt(text: str, line: int, context: int = CONTEXT_LINES) -> str:
    """Lines around `line` numbered as `cat -n` numbers them, the line itself marked with `>`."""
    if not 1 <= line <= len(text.splitlines()):
        return ""
    return numbered(text, max(1, line - context), line + context, mark=line)


_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NOT_UNDER_TEST = frozenset(dir(builtins)) | {"assert", "raises", "approx", "self"}


def called_names(line: str) -> list[str]:
    """The functions a line calls, in order, builtins and pytest helpers left out: in a failing
    assertion, the code under test."""
    names = [name for name in _CALL.findall(line) if name not in _NOT_UNDER_TEST]
    return list(dict.fromkeys(names))


def definition_range(text: str, name: str) -> tuple[int, int] | None:
    """First and last line of the function or class `name` (top level or a method), or None."""
    tree = parse(text)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return first, node.end_lineno or node.lineno
    return None


def numbered(text: str, first: int, last: int, mark: int = 0) -> str:
    """Lines `first`..`last` numbered as `cat -n` numbers them, line `mark` marked with `>`."""
    lines = text.splitlines()
    last = min(last, len(lines))
    width = len(str(last))
    return "\n".join(
        f"{'>' if number == mark else ' '}{number:>{width}}  {lines[number - 1]}".rstrip()
        for number in range(first, last + 1)
    )
