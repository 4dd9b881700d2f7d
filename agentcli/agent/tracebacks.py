"""Where in the repository a failure happened, from the error a command printed.

A traceback names a file and a line; a small model then has to think of reading that file, find
the line, and often misreads it. Showing the lines around it with the failure puts the cause in
front of the model at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Python: `  File "/work/report/summary.py", line 15, in revenue_by_customer`
_PYTHON_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
# pytest --tb=short and --tb=line: `pager.py:7: in paginate`, `test_pager.py:12: AssertionError`
_PYTEST_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): ", re.MULTILINE)
# bash: `backup.sh: line 5: cd: my: No such file or directory`
_SHELL_FRAME = re.compile(r"^([\w./-]+\.(?:sh|bash)): line (\d+): ", re.MULTILINE)
CONTEXT_LINES = 4
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$|(?:^|/)tests?/")


def failure_location(output: str, workdir: str, exists: Callable[[str], bool]) -> tuple[str, int] | None:
    """(path relative to `workdir`, line) of the innermost frame in the repository's own code.

    A frame in code under test wins over one in a test file: the assertion is where a failure shows,
    the code it calls is where it comes from.
    """
    frames: list[tuple[str, int]] = []
    for pattern in (_PYTHON_FRAME, _PYTEST_FRAME, _SHELL_FRAME):
        for match in pattern.finditer(output):
            path = _relative(match.group(1), workdir)
            if path is not None and exists(path):
                frames.append((path, int(match.group(2))))
        if frames:
            break
    if not frames:
        return None
    code = [frame for frame in frames if not _TEST_FILE.search(frame[0])]
    return (code or frames)[-1]


def _relative(path: str, workdir: str) -> str | None:
    prefix = workdir.rstrip("/") + "/"
    if path.startswith(prefix):
        path = path[len(prefix) :]
    elif path.startswith("/"):
        return None
    path = path.removeprefix("./")
    if "site-packages/" in path or path.startswith(("..", "<")):
        return None
    return path


def excerpt(text: str, line: int, context: int = CONTEXT_LINES) -> str:
    """Lines around `line` numbered as `cat -n` numbers them, the line itself marked with `>`."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    first, last = max(1, line - context), min(len(lines), line + context)
    width = len(str(last))
    return "\n".join(
        f"{'>' if number == line else ' '}{number:>{width}}  {lines[number - 1]}".rstrip()
        for number in range(first, last + 1)
    )
