"""What a task asks, read once from its words and the repository before the first reply: the look run
first (the definition or short file it names) and the files it asks to be written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.agent.checking import SHELL_AND_PYTHON_SCRIPTS
from agentcli.agent.first_look import lines_look
from agentcli.agent.tracebacks import is_test_file
from agentcli.policies import Policies
from agentcli.repo.overview import list_files
from agentcli.repo.repomap import MAX_FILE_BYTES
from agentcli.sandbox.base import Sandbox
from agentcli.session.checks import failing_tests, test_command
from agentcli.session.definitions import named_as_code, named_definitions
from agentcli.session.done import TreeKept
from agentcli.session.outputs import is_program, named_outputs

# The longest function or class shown before the first reply, in lines.
MAX_SHOWN_DEFINITION_LINES = 60


@dataclass
class TaskSetup:
    """What a task asks (see `read_task`)."""

    looks: list[str]
    outputs: list[str]  # the files the task asks to be written
    # How the tests failed before the task, where it does not speak of failures (not held against it).
    failing_before: str | None = None


def read_task(
    task: str, root: Path, sandbox: Sandbox | None, policies: Policies, tree_kept: TreeKept, *, at_start: bool = True
) -> TaskSetup:
    """What `task` asks of the repository at `root` as it is now (`at_start`: as the task found it, not
    as a resumed run left it, whose failures are no older than the task)."""
    files = list_files(root)
    texts = repository_texts(root, files)
    looks, failing_before = _before_first_reply(task, files, texts, sandbox if at_start else None, policies, tree_kept)
    outputs = named_outputs(task, files, _code_text(texts))
    return TaskSetup(
        looks=looks,
        outputs=outputs,
        failing_before=failing_before,
    )


def _before_first_reply(
    task: str, files: list[str], texts: dict[str, str], sandbox: Sandbox | None, policies: Policies, tree_kept: TreeKept
) -> tuple[list[str], str | None]:
    """The look run before the first reply (the definition or short file the task names), and how the
    tests failed before a task that does not speak of tests or failures: a task that does not (count
    the TODO comments) is not about them, so their failures are not held against it."""
    failing_before = None
    command = test_command(files)
    excusing = policies.on("tests") and policies.on("failing-before")
    if command is not None and sandbox is not None and excusing and not concerns_failures(task):
        with tree_kept():
            failing_before = policies.fired_if(
                "failing-before", failing_tests(sandbox, test_command(files, every=True) or command)
            )
    looks: list[str] = []
    if (
        policies.on("named-code")
        and not only_tests(task)  # a task asking only for tests is shown no code to change
        and (definition := _named_definition(task, texts) or _named_source(task, texts)) is not None
    ):
        looks.append(definition)
        policies.fired("named-code")
    return looks, failing_before


def repository_texts(root: Path, files: list[str]) -> dict[str, str]:
    """The text of each of `files` of the repository at `root` (those over the repository map's size
    limit left out)."""
    texts: dict[str, str] = {}
    for name in files:
        found = untrusted.lstat(root, name)
        if found is not None and found.st_size <= MAX_FILE_BYTES:
            text = untrusted.try_read_text(root, name)
            if text is not None:
                texts[name] = text
    return texts


def _python_sources(texts: dict[str, str]) -> dict[str, str]:
    """The repository's Python files that are not tests, with their text."""
    return {path: text for path, text in texts.items() if path.endswith(".py") and not is_test_file(path)}


def _code_text(texts: dict[str, str]) -> str:
    """The text of the repository's programs (its prose, a README, left out)."""
    return "\n".join(text for path, text in texts.items() if is_program(path))


def _named_definition(task: str, texts: dict[str, str]) -> str | None:
    """The look at the one function or class of the repository the task names as code ("Implement
    parse_duration in durations.py"), where it is short enough to show; None otherwise."""
    named = [d for d in named_definitions(task, _python_sources(texts)) if named_as_code(task, d.name)]
    if len(named) != 1:
        return None
    node = named[0].node
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    last = node.end_lineno or node.lineno
    return lines_look(named[0].path, first, last) if last - first < MAX_SHOWN_DEFINITION_LINES else None


def _named_source(task: str, texts: dict[str, str]) -> str | None:
    """The look at the whole of the one source file the task names ("server.py always listens on port
    8000"), where it is short enough to show and the task asks for no new file (tests for it, say);
    None otherwise. Not shown it, a small model runs the server to see what it does, again and again."""
    if named_outputs(task, list(texts), _code_text(texts)):
        return None
    named = [
        name
        for name in texts
        if name.endswith(SHELL_AND_PYTHON_SCRIPTS)
        and not is_test_file(name)
        and re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", task)
    ]
    if len(named) != 1:
        return None
    count = len(texts[named[0]].splitlines())
    return lines_look(named[0], 1, count) if 0 < count <= MAX_SHOWN_DEFINITION_LINES else None


# A task about tests or something that goes wrong: "the tests fail", "fix the bug", "crashes with".
_ABOUT_FAILURE = re.compile(
    r"\b(?:tests?|pytest|fail\w*|bugs?|fix\w*|broken|breaks?|crash\w*|errors?|exceptions?|traceback)\b",
    re.IGNORECASE,
)


def concerns_failures(task: str) -> bool:
    """Whether the task speaks of tests or of something failing; tests that fail before a task that
    does not (count the TODO comments) fail for reasons that are not the task's."""
    return _ABOUT_FAILURE.search(task) is not None


# A task that asks for tests to be written: "write tests for ...", "add a test".
_WRITES_TESTS = re.compile(r"\b(?:write|add|create)\b[^.]*?\btests?\b", re.IGNORECASE)
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


def only_tests(task: str) -> bool:
    """Whether the task asks for tests and for no change to the code they test."""
    if _WRITES_TESTS.search(task) is None:
        return False
    return not any(
        (_DOES.search(clause) or _FAULT.search(clause)) and not _TEST_OBJECT.search(clause)
        for clause in _CLAUSES.split(task)
    )
