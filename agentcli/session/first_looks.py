"""What the agent is shown before its first reply besides the repository: the output of the commands
the task quotes (else of the tests).

"`python3 app.py` crashes" or "the tests fail": a small model that has not seen the failure plans a
fix for the one it imagines. Running what the task names, in the sandbox, puts the real error in
front of it. Only commands that run a program of the repository qualify, never ones that write,
pipe, chain or delete, and never more than two.
"""

from __future__ import annotations

import re
import shlex

from agentcli.session.checks import test_command

MAX_LOOKS = 2
TESTS = "python3 -m pytest -q --tb=short -p no:cacheprovider"
# Text the task quotes between backticks.
QUOTED = re.compile(r"`([^`\n]+)`")
_FENCED = re.compile(r"^```[\w-]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Redirections, pipes, chains, substitutions: a quoted command with any of them is not run unasked.
_UNSAFE = re.compile(r"[<>|;&`]|\$\(")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
# An argument standing for one to fill in: `ID`, `<name>`, `{path}`, `...`.
_PLACEHOLDER = re.compile(
    r"(?<=\s)(?:<[^<>\s]+>|\{[^{}\s]+\}|\[[^\[\]\s]+\]|\.\.\.|"
    r"(?:ID|NAME|FILE|PATH|N|NUM|NUMBER|VALUE|ARG|ARGS|KEY|URL|DIR|TEXT|WORD|QUERY|USER|PORT|HOST)S?)(?=\s|$)"
)
INTERPRETERS = frozenset({"python", "python3", "bash", "sh", "node", "ruby", "perl"})
# Tools that run a project's checks: only their test subcommand qualifies.
TEST_RUNNERS = {"make": {"test", "check"}, "npm": {"test"}, "go": {"test"}, "cargo": {"test"}}


def first_looks(task: str, files: list[str]) -> list[str]:
    """Up to MAX_LOOKS commands: those the task quotes that run a program here, else the Python tests."""
    present = set(files)
    quoted = [*QUOTED.findall(task), *(line for block in _FENCED.findall(task) for line in block.splitlines())]
    looks: list[str] = []
    for candidate in quoted:
        command = _own_input(candidate.strip().removeprefix("$ ").strip(), present)
        if _PLACEHOLDER.search(command):
            continue  # `python3 todo.py done ID`: a form of the command, not one to run
        if command not in looks and runs_repository_program(command, present):
            looks.append(command)
    if not looks and test_command(files) is not None:
        looks.append(TESTS)
    return looks[:MAX_LOOKS]


# `./count.py < file.txt`: the input a quoted command reads, at its end.
_INPUT = re.compile(r"\s*<\s*([\w./-]+)$")


def _own_input(command: str, files: set[str]) -> str:
    """`command` reading a repository file as it says, or with its input left out (empty) where that
    file is not here: `./scripts/wordcount.py < file.txt` still shows whether the script runs at all."""
    match = _INPUT.search(command)
    if match is None:
        return command
    if match.group(1).removeprefix("./") in files:
        return f"{command[: match.start()]} < {match.group(1)}"
    return command[: match.start()]


def runs_repository_program(command: str, files: set[str]) -> bool:
    """Whether `command` runs a script of the repository, or its tests, and nothing else."""
    command = _INPUT.sub("", command)  # reading a repository file is a look, like running the program
    if not command or _UNSAFE.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return False
    program, args = words[0], words[1:]
    if program.startswith("./"):
        return program[2:] in files
    if program == "pytest":
        return True
    if program in TEST_RUNNERS:
        return bool(args) and args[0] in TEST_RUNNERS[program]
    if program not in INTERPRETERS or not args:
        return False
    if program.startswith("python") and args[0] == "-m":
        return args[1:2] in (["pytest"], ["unittest"])
    return args[0].removeprefix("./") in files


# A task about tests or something that goes wrong: "the tests fail", "fix the bug", "crashes with".
_ABOUT_FAILURE = re.compile(
    r"\b(?:tests?|pytest|fail\w*|bugs?|fix\w*|broken|breaks?|crash\w*|errors?|exceptions?|traceback)\b",
    re.IGNORECASE,
)


def concerns_failures(task: str) -> bool:
    """Whether the task speaks of tests or of something failing; tests that fail before a task that
    does not (count the TODO comments) fail for reasons that are not the task's."""
    return _ABOUT_FAILURE.search(task) is not None


# "`python3 greet.py Ada --shout` prints `HELLO, ADA!`": a command and the output the task expects of it.
_EXPECTED = re.compile(
    r"`([^`\n]+)`\s*,?\s+(?:(?:should|must|now|still|then)\s+)*(?:print|prints|output|outputs|show|shows|give|gives)\s+`([^`\n]+)`",
    re.IGNORECASE,
)


def expected_outputs(task: str) -> dict[str, str]:
    """Commands the task says what they print, with that output."""
    return {command.strip().removeprefix("$ ").strip(): out.strip() for command, out in _EXPECTED.findall(task)}
