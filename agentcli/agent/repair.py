"""Turn commands that cannot work here into ones that do, and say so to the model.

Small models reach for interactive editors and pagers even when told not to; in a sandbox with
no terminal those hang or print noise. Showing the file instead keeps the run moving. They also
write Python one-liners that Python cannot parse; run as the script they mean, they do their work.
"""

from __future__ import annotations

import re
import shlex

from agentcli.agent.edits import python_script_command, without_comment_lines
from agentcli.agent.pysource import parse
from agentcli.prompts import render

EDITORS = {"vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe", "gedit", "code"}
PAGERS = {"less", "more", "most"}


# `cd /path/to/your/project && ...`: a placeholder copied from examples, where the repository is meant.
_PLACEHOLDER_CD = re.compile(
    r"""^\s*cd\s+['"]?((?:/path/to|~?/?(?:path/to/)?your[_-])[^\s'";&]*)['"]?\s*(?:&&|;|\n|$)\s*"""
)


def repair(command: str) -> tuple[str, str | None]:
    """The command to run and, when it was changed, a note for the model."""
    if script := one_line_python(command):
        return script
    if placeholder := _PLACEHOLDER_CD.match(command):
        rest = command[placeholder.end() :]
        note = render("notes/placeholder_cd", placeholder=placeholder.group(1))
        return (rest, note) if rest.strip() else ("pwd", note)
    # "# Open the file" above `nano textstats.py`: the comment is no part of the command.
    bare = without_comment_lines(command).strip()
    try:
        words = shlex.split(bare)
    except ValueError:
        return command, None
    if not words or any(sep in bare for sep in ("|", ";", "&&", "||", "\n", ">")):
        return command, None
    program = words[0].rsplit("/", 1)[-1]
    files = [w for w in words[1:] if not w.startswith(("-", "+"))]
    if program in EDITORS:
        shown = " ".join(shlex.quote(f) for f in files)
        note = render("notes/editor", program=program)
        return (f"cat -n {shown}" if files else "ls", note)
    if program in PAGERS and files:
        return f"cat -n {' '.join(shlex.quote(f) for f in files)}", render("notes/pager", program=program)
    return command, None


# A compound statement's header: what small models put after `;` in `python3 -c`, where Python
# allows only simple statements.
_HEADER = re.compile(r"(?:with|for|if|while|async\s+with|async\s+for)\b")
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
_ONE_LINER = re.compile(r"^python3?$")
# `python -c '...' [> file]` whole: quotes inside the outer single quotes (`newline=''`) are the
# code's own, though the shell reads them as the end of the argument.
_SINGLE_QUOTED = re.compile(r"^python3?\s+-c\s+'(.*)'(?:\s*(>>?)\s*(\S+))?\s*$")


def one_line_python(command: str) -> tuple[str, str] | None:
    """`python3 -c "import json; with open(f) as h: d = json.load(h); for k in d: print(k)"`, which
    cannot parse, as the script it means (each `with`/`for`/`if` holding all that follows it), and a
    note; None for anything else. Its output may go to a file (`> count.txt`)."""
    lines = without_comment_lines(command).splitlines()
    if len(lines) != 1:
        return None
    quoted = _SINGLE_QUOTED.match(lines[0])
    if quoted is not None and "'" in quoted.group(1):
        code, redirect = quoted.group(1), [part for part in quoted.group(2, 3) if part]
        if _parses(code):
            note = render("notes/quotes_ended_program", script=code)
            return _script_run(code + "\n", redirect), note
    else:
        try:
            words = shlex.split(lines[0])
        except ValueError:
            return None
        if len(words) < 3 or not _ONE_LINER.match(words[0]) or words[1] != "-c":
            return None
        code, redirect = words[2], words[3:]
    if _parses(code) or (redirect and (len(redirect) != 2 or redirect[0] not in (">", ">>"))):
        return None
    statements: list[tuple[int, str]] = []
    depth = 0
    for statement in _split_outside_brackets(code, ";"):
        while statement:
            if _CONTINUATION.match(statement):
                return None  # where an `else` belongs is anyone's guess
            header = _HEADER.match(statement) and _split_outside_brackets(statement, ":", limit=1)
            if not header or len(header) < 2:
                statements += [(depth, part) for part in _unglued(statement)]
                break
            statements.append((depth, header[0] + ":"))
            depth += 1
            statement = header[1]
    text = "\n".join("    " * level + line for level, line in _result_printed_once(statements)) + "\n"
    if not _parses(text):
        return None
    note = render("notes/one_liner_as_script", script=text)
    return _script_run(text, redirect), note


def _script_run(text: str, redirect: list[str]) -> str:
    """The command that runs the Python script `text`, its output redirected as `redirect` says."""
    run = python_script_command(text)
    if redirect:
        first, rest = run.split("\n", 1)
        run = f"{first} {redirect[0]} {shlex.quote(redirect[1])}\n{rest}"
    return run


# `count += 1 print(count)`: the `;` before a print left out.
_GLUED_PRINT = re.compile(r"\s+(?=print\()")


def _unglued(statement: str) -> list[str]:
    """`statement`, or the two statements it is where a `;` before `print(` was left out."""
    for match in _GLUED_PRINT.finditer(statement):
        before, after = statement[: match.start()], statement[match.end() :]
        if before.strip() and _parses(before) and _parses(after):
            return [before.strip(), after.strip()]
    return [statement]


# `print(count)`, `print(len(rows))`: a result printed.
_PRINTED_NAMES = re.compile(r"^print\((.*)\)$")
_ASSIGNED = re.compile(r"^([A-Za-z_]\w*)\s*=[^=]")
_NAME = re.compile(r"[A-Za-z_]\w*")
# What a header binds: the targets of `for ... in`, the names after `as`.
_BOUND = re.compile(r"^(?:async\s+)?for\s+(.+?)\s+in\b|\bas\s+([A-Za-z_]\w*)")


def _result_printed_once(statements: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The statements with a last `print` of what the top level set up (`count = 0; for ...: count += 1;
    print(count)`) moved out of the loops: the one-liner's author meant the total, printed once."""
    if not statements or statements[-1][0] == 0:
        return statements
    printed = _PRINTED_NAMES.match(statements[-1][1])
    if printed is None or statements[-2][1].endswith(":"):
        return statements
    names = set(_NAME.findall(printed.group(1)))
    accumulators = {m.group(1) for level, line in statements if level == 0 and (m := _ASSIGNED.match(line))}
    # What the loops bind (`for root, dirs, files in`, `as f`) is theirs to print.
    bound = {
        name
        for _, line in statements
        if line.endswith(":")
        for targets in _BOUND.findall(line)
        for name in _NAME.findall(" ".join(targets))
    }
    if names & accumulators and not names & bound:
        return [*statements[:-1], (0, statements[-1][1])]
    return statements


def _parses(code: str) -> bool:
    return parse(code) is not None


def _split_outside_brackets(text: str, separator: str, limit: int = -1) -> list[str]:
    """`text` split at `separator` where it is outside strings and brackets, parts stripped."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            if char == quote and text[i - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0 and (limit < 0 or len(parts) < limit):
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]
