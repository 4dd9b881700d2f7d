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
from dataclasses import dataclass

from agentcli.agent.tracebacks import is_test_file
from agentcli.prompts import render

_WRITES_TESTS = re.compile(r"\b(?:write|add|create)\b[^.]*?\btests?\b", re.IGNORECASE)
MAX_VALUE_CHARS = 300
_END = "AGENTCLI_EXPECTED"


# A task's clauses: "Add caching to get_user(), and add a test for it" is two, one of them a change of code.
_CLAUSES = re.compile(r"[.;,:!?]\s|\band\b|\bthen\b|\balso\b", re.IGNORECASE)
# A clause that asks for something done ("fix it", "add caching"); "make sure they pass" asks for none.
_DOES = re.compile(
    r"^\W*(?:please\s+)?(?:add|implement|fix|change|update|refactor|rename|modify|make(?!\s+sure)|support|"
    r"validate|handle|remove|delete|replace|move|create|write|improve|optimi[sz]e|speed|convert|introduce|"
    r"extend|allow|raise|return|cache|log)\b",
    re.IGNORECASE,
)
# A clause that speaks of a fault in the code: "there is a bug", "a fix for the crash".
_FAULT = re.compile(r"\b(?:fix|fixes|fixed|fixing|bugs?|crash\w*|broken)\b", re.IGNORECASE)
# A clause whose object is tests: "write tests for ...", "add a failing unit test", "cover X with tests".
_TEST_OBJECT = re.compile(r"^\W*(?:please\s+)?\w+\s+(?:[\w-]+\s+){0,3}?tests?\b|\bwith\s+(?:\w+\s+)?tests\b", re.I)


def writes_tests(task: str, asked_files: Iterable[str]) -> bool:
    """Whether the task asks for tests to be written (a test file it names, or "write tests for ...")."""
    return any(is_test_file(f) for f in asked_files) or _WRITES_TESTS.search(task) is not None


def only_tests(task: str, asked_files: Iterable[str]) -> bool:
    """Whether the task asks for tests and for no change to the code they test."""
    if not writes_tests(task, asked_files):
        return False
    return not any(
        (_DOES.search(clause) or _FAULT.search(clause)) and not _TEST_OBJECT.search(clause)
        for clause in _CLAUSES.split(task)
    )


@dataclass(frozen=True)
class Comparison:
    """A failing `assert CALL == VALUE` of a test file."""

    expression: str  # CALL, as written
    command: str  # a shell command that prints CALL's value
    statement: str  # the assert statement, as written
    function: str | None  # the top-level test function that holds it, as written


def compared_call(test_text: str, line: int) -> Comparison | None:
    """The `assert CALL == VALUE` on `line` of a test file (1-based), with the command that prints
    CALL's value (a script of the file's top-level imports); None for any other line."""
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
        statement = ast.get_source_segment(test_text, node)
        if expression is None or statement is None:
            return None
        script = "\n".join(["import sys", "sys.path.insert(0, '.')", *imports, f"print(repr({expression}))"])
        command = f"python3 - <<'{_END}'\n{script}\n{_END}\n"  # the terminator on a line of its own
        holder = next(
            (f for f in tree.body if isinstance(f, ast.FunctionDef) and f.lineno <= line <= (f.end_lineno or 0)),
            None,
        )
        function = ast.get_source_segment(test_text, holder) if holder else None
        return Comparison(expression, command, statement, function)
    return None


def expectation_note(path: str, comparison: Comparison, value: str) -> str | None:
    """What to tell the model of the value the compared call gives, or None when it is too long to offer.
    The test function with that value expected is the reply it can send."""
    value = value.strip()
    if not value or "\n" in value or len(value) > MAX_VALUE_CHARS:
        return None
    expected = f"assert {comparison.expression} == {value}"
    block = comparison.function.replace(comparison.statement, expected, 1) if comparison.function else expected
    return render("notes/expectation", expression=comparison.expression, value=value, path=path, block=block)
