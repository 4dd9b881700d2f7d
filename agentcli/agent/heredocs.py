"""A here-document that writes code is written as it stands (policy `literal-heredoc`).

`cat > run.sh <<EOF` with an unquoted end word expands `$1`, `$dir`, `$(...)` and backquotes while the
file is written, so the script comes out with its variables gone (`find "" -name ...`) and whatever
the backquotes held has run. Small models write it this way most of the time. Where the file is code
or documentation, whose `$` and backquotes are its own, and the body shows no sign of meaning the
expansion (no `\\$` or `` \\` `` escape), the end word is quoted: the file gets the text the model wrote.
"""

from __future__ import annotations

import re

# `<<EOF`, `<<-EOF`, `<< EOF`: an end word with no quote or backslash (a quoted one expands nothing).
_OPERATOR = re.compile(r"(?<![<\\])<<(-?)[ \t]*([A-Za-z_][A-Za-z0-9_]*)(?=[\s;&|>)]|$)")
# Where the here-document goes: `> file`, `>> file` or `tee [-a] file` on the operator's line.
_TARGET = re.compile(r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*['\"]?([^\s'\"<>;&|)]+)")
# What the shell would expand in the body: a parameter, a command or arithmetic substitution, backquotes.
_EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@#?*!$-]|`")
_ESCAPED = re.compile(r"\\[$`]")
# Files whose `$` and backquotes belong to their own language, not to the shell that writes them.
_CODE_SUFFIXES = frozenset(
    {".sh", ".bash", ".zsh", ".py", ".mk", ".pl", ".rb", ".js", ".ts", ".php", ".awk", ".sed", ".md", ".rst"}
    | {".c", ".h", ".go", ".rs", ".java", ".r", ".lua"}
)
_CODE_NAMES = frozenset({"makefile", "gnumakefile", "dockerfile", "containerfile", "justfile"})


def quote_code_heredocs(command: str) -> tuple[str, list[str]] | None:
    """`command` with the end word of each here-document that writes code quoted, and the files they
    write; None where no here-document needed it."""
    lines = command.split("\n")
    quoted: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        operators = list(_OPERATOR.finditer(line))
        end = _body_end(lines, i, operators[0]) if len(operators) == 1 else None
        if end is None:
            i += 1
            continue
        operator = operators[0]
        body = lines[i + 1 : end]
        target = _TARGET.search(line)
        if target is not None and _is_code(target.group(1), body) and _expands(body):
            start, stop = operator.span(2)
            lines[i] = f"{line[:start]}'{operator.group(2)}'{line[stop:]}"
            quoted.append(target.group(1))
        i = end + 1
    return ("\n".join(lines), quoted) if quoted else None


def _body_end(lines: list[str], at: int, operator: re.Match[str]) -> int | None:
    """The index of the line that ends the here-document opened on line `at`, or None if none does."""
    strip_tabs, word = operator.group(1) == "-", operator.group(2)
    for j in range(at + 1, len(lines)):
        if (lines[j].lstrip("\t") if strip_tabs else lines[j]) == word:
            return j
    return None


def _is_code(path: str, body: list[str]) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    suffix = name[name.rfind(".") :] if "." in name else ""
    return suffix in _CODE_SUFFIXES or name in _CODE_NAMES or bool(body and body[0].startswith("#!"))


def _expands(body: list[str]) -> bool:
    text = "\n".join(body)
    return bool(_EXPANSION.search(text)) and not _ESCAPED.search(text)
