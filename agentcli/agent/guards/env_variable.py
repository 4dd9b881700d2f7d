"""Policy `env-variable`: a variable the task's program is to read from its environment is not fixed
into a file (`"$PORT"` expanded by the shell as the file is written), nor only set in the shell."""

from __future__ import annotations

import re

from agentcli.agent.checking import redirected_files, simple_commands
from agentcli.agent.edits import sed_targets
from agentcli.agent.guards.task_guard import Read, TaskGuard
from agentcli.prompts import render

# "the port from the PORT environment variable": the names a task reads from the environment.
_ENV_NAMED = re.compile(
    r"\b(?:environment variable|env(?:ironment)? var(?:iable)?)s?\s+`?([A-Z][A-Z0-9_]*)`?"
    r"|`?\b([A-Z][A-Z0-9_]*)`?\s+(?:environment|env) var",
)
# A double-quoted argument holding `$NAME`: the shell puts its value there before the command runs.
_EXPANDED = re.compile(r'"[^"\n]*\$\{?([A-Z][A-Z0-9_]*)\b[^"\n]*"')
# What sets a variable in the shell, and the shell's own words around it (`if [ -n "$PORT" ]; then`).
_SETS_VARIABLE = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=\S*$")
_SHELL_CONTROL = re.compile(r"^(?:(?:el)?if\s+\[.*\]|then|else|fi)$")
# Text the shell passes on as it is: a single-quoted string, a quoted heredoc's body.
_LITERAL_TEXT = re.compile(r"""'[^']*'|<<-?\s*(['"])(\w+)\1[^\n]*\n.*?^\s*\2\s*$|\\\$""", re.MULTILINE | re.DOTALL)


def _environment_names(task: str) -> set[str]:
    return {name for pair in _ENV_NAMED.findall(task) for name in pair if name}


def _without_literal_text(command: str) -> str:
    """`command` with what the shell does not expand left out; the double-quoted text inside single
    quotes (`printf '... "${PORT:-8000}" ...'`) is written as it stands."""
    out, i = [], 0
    in_double = False
    while i < len(command):
        char = command[i]
        if char == '"' and (i == 0 or command[i - 1] != "\\"):
            in_double = not in_double
        elif not in_double and (match := _LITERAL_TEXT.match(command, i)):
            i = match.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


def variable_only_set(command: str, task: str) -> str | None:
    """Why a command that only sets, in the shell, the variable the task's program is to read from its
    environment (`export PORT=8080`, an `if` that gives PORT its default) does not do the task: the
    program's code is unchanged, and the shell's variable is gone after the session."""
    names = _environment_names(task)
    parts = [part.strip() for part in simple_commands(command)]
    assigned = [m.group(1) for part in parts if (m := _SETS_VARIABLE.match(part))]
    if not assigned or not set(assigned) <= names:
        return None
    if not all(_SETS_VARIABLE.match(part) or _SHELL_CONTROL.match(part) for part in parts):
        return None
    return render("refusals/variable_only_set", name=assigned[0])


def expanded_variable(command: str, task: str) -> str | None:
    """Why a command that writes a file may not put `$PORT` in double quotes where the task wants the
    program to read PORT from its environment: the file would hold today's value, fixed."""
    names = _environment_names(task)
    if not names or not (sed_targets(command) or redirected_files(command)):
        return None
    for name in _EXPANDED.findall(_without_literal_text(command)):
        if name in names:
            return render("refusals/expanded_variable", name=name)
    return None


def refuse(command: str, task: str, read: Read) -> str | None:
    return expanded_variable(command, task) or variable_only_set(command, task)


GUARD = TaskGuard("env-variable", refuse=refuse)
