"""Policy `keep-named`: a command may not change a file the task says to leave as it is (the data a
program fails on, the tests)."""

from __future__ import annotations

import re

from agentcli.agent.checking import redirected_files, removed_files
from agentcli.agent.edits import sed_targets
from agentcli.agent.guards.task_guard import NAMED_PATH, Read, TaskGuard
from agentcli.prompts import render

# "without changing test_shapes.py", "do not edit config.yaml", "(the CSV file is correct as it is)":
# files the task says to leave as they are, named or by their kind.
# A path, not the start of a possessive ("main.py's public API" leaves main.py's API, not the file, alone).
_PATH_WORD = r"`?((?:[\w-]+/)*[\w.-]+\.\w+)(?!['’]\w|\w)`?"
_LEAVE_NAMED = re.compile(
    rf"\b(?:without (?:changing|modifying|editing|touching)|do(?:n't| not) (?:change|modify|edit|touch))\s+{_PATH_WORD}"
    # the file itself: not "without changing cli.py behaviour", "don't touch x.py except to ..."
    r"(?!\s+(?:behaviou?r|api|public|interface|output|format|logic|semantics|signature|except|other than"
    r"|apart from|beyond)\b)"
    rf"|{_PATH_WORD}\s+is (?:correct|right|fine) as it is\b",  # not "calc.py is correct for ints, but ..."
    re.IGNORECASE,
)
_LEAVE_KIND = re.compile(r"\bthe (\w+) file is (?:correct|right|fine)\b", re.IGNORECASE)


def files_to_keep(task: str) -> set[str]:
    """The files the task says to leave as they are: named ("without changing test_shapes.py"), or
    by kind ("the CSV file is correct as it is": the .csv files the task names)."""
    kept = {name for match in _LEAVE_NAMED.finditer(task) for name in match.groups() if name}
    for kind in _LEAVE_KIND.findall(task):
        kept |= {path for path, suffix in NAMED_PATH.findall(task) if suffix.lower() == kind.lower()}
    return {name.removeprefix("./") for name in kept}


def refuse(command: str, task: str, read: Read) -> str | None:
    kept = files_to_keep(task)
    written = [*redirected_files(command), *sed_targets(command), *removed_files(command)]
    for path in (path.removeprefix("./") for path in written):
        if path in kept:
            return render("refusals/file_to_leave", path=path)
    return None


GUARD = TaskGuard("keep-named", refuse=refuse)
