"""A failing assertion in a test the task asks for: the value the code under test gives.

Asked to write tests for code that works, a small model writes `assert word_frequencies("the cat and
the hat") == {'the': 2, 'and': 1}` from memory, sees it fail, and sets out to "fix"
word_frequencies. Where the task is to write tests, the code is taken as it is: the value its call
gives is worked out in the sandbox and offered as the test's expectation.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from agentcli.agent.tracebacks import is_test_file

_WRITES_TESTS = re.compile(r"\b(?:write|add|create)\b[^.]*?\btests?\b", re.IGNORECASE)
MAX_VALUE_CHARS = 300
_END = "AGENTCLI_EXPECTED"


def writes_tests(task: str, asked_files: Iterable[str]) -> bool:
    """Whether the task asks for tests to be written (a test file it names, or "write tests for ...")."""
    return any(is_test_file(f) for f in asked_files) or _WRITES_TESTS.search(task) is not None


def compared_call(test_text: str, line: int) -> tuple[str, str] | None:
    """(the checked expression, a shell command that prints its value) for `assert CALL == VALUE` on
    `line` of a test file (1-based), run as a script of the file's top-level imports; None for any
    other line."""
    try:
        tree = ast.parse(test_text)
    except (SyntaxError, ValueError):
        return None
    imports = [
        ast.get_source_segment(test_text, node) or ""
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assert) and node.lineno == line and isinstance(node.test, ast.Compare)):
            continue
        compare = node.test
        if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq) or not isinstance(compare.left, ast.Call):
            return None
        expression = ast.get_source_segment(test_text, compare.left)
        if expression is None:
            return None
        script = "\n".join(["import sys", "sys.path.insert(0, '.')", *imports, f"print(repr({expression}))"])
        return expression, f"python3 - <<'{_END}'\n{script}\n{_END}\n"  # the terminator on a line of its own
    return None


def expectation_note(expression: str, value: str) -> str | None:
    """What to tell the model of the value `expression` gives, or None when it is too long to offer."""
    value = value.strip()
    if not value or "\n" in value or len(value) > MAX_VALUE_CHARS:
        return None
    return (
        f"`{expression}` gives `{value}` with the code as it is. The task asks for tests of that code: "
        f"where this is what its docstring says, the test should expect it:\n```python\n"
        f"assert {expression} == {value}\n```"
    )
