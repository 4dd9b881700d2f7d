"""What the agent is shown before its first reply besides the repository: the output of the commands
the task quotes (else of the tests), and a hint for tasks about data files.

"`python3 app.py` crashes" or "the tests fail": a small model that has not seen the failure plans a
fix for the one it imagines. Running what the task names, in the sandbox, puts the real error in
front of it. Only commands that run a program of the repository qualify, never ones that write,
pipe, chain or delete, and never more than two.
"""

from __future__ import annotations

import re
import shlex

from agentcli.prompts import render
from agentcli.session.checks import test_command

MAX_LOOKS = 2
# A task that names a data file is best done with a Python script: a small model gets awk, cut and
# jq wrong on quoted CSV fields, JSON and log lines, and says it is done.
_DATA_FILE = re.compile(r"[\w./-]+\.(?:csv|tsv|json|jsonl|ndjson|log|xml|ya?ml)\b", re.IGNORECASE)
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


# What a task replaces: "rename calc_total to compute_total", "from 1.4.2 to 1.5.0", "the misspelling
# "recieve"". A small model edits the one place it remembers; shown every place, it can edit them all.
_REPLACED = (
    re.compile(r"\brename\s+(?:the\s+\w+\s+)?`?([A-Za-z_][\w.]*)`?\s+(?:to|as|into)\s", re.IGNORECASE),
    re.compile(r"\bfrom\s+`?(v?\d+(?:\.\d+)+\w*|[A-Za-z]\w*_\w+)`?\s+to\s", re.IGNORECASE),
    re.compile(r"\b(?:misspell\w*|typo)\s+[\"'`]([^\"'`\n]+)[\"'`]", re.IGNORECASE),
)
_PRONOUNS = frozenset({"this", "that", "them", "these", "those", "its", "one"})
SEARCH = "grep -rnIF --exclude-dir=.git --exclude-dir=.agentcli -- {text} ."
_SEARCH_PREFIX = SEARCH.partition("{text}")[0]


def replaced_text(task: str) -> str | None:
    """The text the task renames or replaces everywhere, or None."""
    for pattern in _REPLACED:
        # Not "rename it to calculate_total": a pronoun is no text to search for.
        if (match := pattern.search(task)) and len(match.group(1)) > 2 and match.group(1).lower() not in _PRONOUNS:
            return match.group(1)
    return None


def substitution_start(task: str) -> str:
    """The start of a `sed` command that replaces the text the task renames or replaces everywhere,
    for the model to go on with the new text and the files; "" where there is none sed takes as it
    stands. Told that nothing has changed yet, a small model asked to fix the typo "recieve" copies
    the objection, or rewrites README.md from memory with one `echo`."""
    text = replaced_text(task)
    if text is None or not re.fullmatch(r"[\w -]+", text):
        return ""
    return render("begun/substitution", text=text)


def search_look(text: str) -> str:
    """The look that lists every line of the repository holding `text`."""
    return SEARCH.format(text=shlex.quote(text))


# A git chore names files (`debug.log` to untrack) that are not data to work on.
_GIT_CHORE = re.compile(r"\bgit\b|\bcommit|\.gitignore\b", re.IGNORECASE)
_PROGRAM_FILE = re.compile(r"[\w./-]+\.(?:py|sh|js|ts|rb|go|rs|java|c|cpp)\b", re.IGNORECASE)


# A task about tests or something that goes wrong: "the tests fail", "fix the bug", "crashes with".
_ABOUT_FAILURE = re.compile(
    r"\b(?:tests?|pytest|fail\w*|bugs?|fix\w*|broken|breaks?|crash\w*|errors?|exceptions?|traceback)\b",
    re.IGNORECASE,
)


def concerns_failures(task: str) -> bool:
    """Whether the task speaks of tests or of something failing; tests that fail before a task that
    does not (count the TODO comments) fail for reasons that are not the task's."""
    return _ABOUT_FAILURE.search(task) is not None


def task_hint(task: str, looks: list[str]) -> str:
    """A hint for the first reply that the task calls for, or "".

    The data hint is for tasks whose work is the data: where the task quotes a program of the
    repository to run, or is a git chore, the file it names is the program's input or the chore's
    object, and the fix is in the code or in git. (The tests, run where the task quotes nothing, say
    nothing of the kind.)
    """
    named = data_task_files(task, looks)
    return render("first_look/data_hint", name=named[0]) if named else ""


def data_task_files(task: str, looks: list[str]) -> list[str]:
    """The data files a task whose work is the data names, in order; [] for any other task (see
    `task_hint`)."""
    programs = [look for look in looks if look != TESTS and not look.startswith(_SEARCH_PREFIX)]
    # A task naming a program ("the bug in parser.py that drops the last row of data.csv") is about its code.
    if programs or _GIT_CHORE.search(task) or _PROGRAM_FILE.search(task):
        return []
    return list(dict.fromkeys(match.removeprefix("./") for match in _DATA_FILE.findall(task)))


# "`python3 greet.py Ada --shout` prints `HELLO, ADA!`": a command and the output the task expects of it.
_EXPECTED = re.compile(
    r"`([^`\n]+)`\s*,?\s+(?:(?:should|must|now|still|then)\s+)*(?:print|prints|output|outputs|show|shows|give|gives)\s+`([^`\n]+)`",
    re.IGNORECASE,
)


def expected_outputs(task: str) -> dict[str, str]:
    """Commands the task says what they print, with that output."""
    return {command.strip().removeprefix("$ ").strip(): out.strip() for command, out in _EXPECTED.findall(task)}
