"""A here-document that writes code is written as it stands (policy `literal-heredoc`).

`cat > run.sh <<EOF` with an unquoted end word expands `$1`, `$dir`, `$(...)` and backquotes while the
file is written, so the script comes out with its variables gone (`find "" -name ...`) and whatever
the backquotes held has run. Small models write it this way most of the time. Where `cat` or `tee`
writes the here-document to a file of code or documentation, whose `$` and backquotes are its own,
and nothing says the expansion is meant (an escaped `\\$`, a loop, a variable the command sets before,
arithmetic, a file name with a `$`), the end word is quoted: the file gets the text the model wrote.
"""

from __future__ import annotations

import re

# `<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<\EOF` (not `<<<`): its tab flag, its quote or backslash, its end word.
_OPERATOR = re.compile(r"(?<![<\\])<<(-?)[ \t]*(['\"]?|\\)([A-Za-z_][A-Za-z0-9_]*)['\"]?(?=[\s;&|>)]|$)")
# The simple commands of a line (a pipe keeps `cat <<EOF | tee f` together).
_SEPARATOR = re.compile(r"&&|\|\||;")
# `cat ... > file` / `cat ... >> file`, or `tee [-a] file`: the file the here-document goes to.
_CAT_TARGET = re.compile(r"^\s*cat\b[^|]*?>>?[ \t]*['\"]?([^\s'\"<>;&|)]+)")
_TEE_TARGET = re.compile(r"(?:^|\|)\s*tee(?:[ \t]+-a)?[ \t]+['\"]?([^\s'\"<>;&|)-][^\s'\"<>;&|)]*)")
# What the shell would expand in the body: a parameter, a command substitution, backquotes.
_EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@#?*!$-]|`")
_NAMES = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# Signs that the expansion is meant: an escape, arithmetic.
_MEANT = re.compile(r"\\[$`]|\$\(\(")
_LOOP = re.compile(r"(?:^|[;&|(]|\bdo\b|\bthen\b)\s*(?:for|while|until)\s", re.MULTILINE)
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
        operators = list(_OPERATOR.finditer(lines[i]))
        at, i = i, i + 1
        for operator in operators:  # bash reads the bodies one after another, below the line
            end = _body_end(lines, i, operator)
            if end is None:
                return (_joined(lines), quoted) if quoted else None
            target = _target(lines[at], operator) if len(operators) == 1 and not operator.group(2) else None
            if target and _literal_meant(command, lines, at, i, end, target):
                start, stop = operator.span(3)
                lines[at] = f"{lines[at][:start]}'{operator.group(3)}'{lines[at][stop:]}"
                quoted.append(target)
            i = end + 1
    return (_joined(lines), quoted) if quoted else None


def _joined(lines: list[str]) -> str:
    return "\n".join(lines)


def _body_end(lines: list[str], start: int, operator: re.Match[str]) -> int | None:
    """The index of the line that ends a here-document whose body starts at line `start`, or None."""
    strip_tabs, word = operator.group(1) == "-", operator.group(3)
    for j in range(start, len(lines)):
        if (lines[j].lstrip("\t") if strip_tabs else lines[j]) == word:
            return j
    return None


def _target(line: str, operator: re.Match[str]) -> str | None:
    """The file `cat` or `tee` writes the here-document to, in the simple command that holds it."""
    start = max((m.end() for m in _SEPARATOR.finditer(line, 0, operator.start())), default=0)
    following = _SEPARATOR.search(line, operator.end())
    part = line[start : following.start() if following else len(line)]
    found = _CAT_TARGET.search(part) or _TEE_TARGET.search(part)
    return found.group(1) if found else None


def _literal_meant(command: str, lines: list[str], at: int, start: int, end: int, target: str) -> bool:
    """Whether the body (lines `start` to `end`) is code meant as written: a code file's, holding what
    the shell would expand, with no sign that the expansion is wanted."""
    body = lines[start:end]
    text = "\n".join(body)
    if "$" in target or not _is_code(target, body) or not _EXPANSION.search(text) or _MEANT.search(text):
        return False
    before = "\n".join([*lines[:at], lines[at]])
    if _LOOP.search(before):
        return False  # a generator: each file gets the loop's values
    for name in set(_NAMES.findall(text)):
        if re.search(rf"(?:^|[\s;&|(]){name}=|\bread\b[^\n;&|]*\b{name}\b|\bfor\s+{name}\b", before):
            return False  # a value the command set for the body
    return True


def _is_code(path: str, body: list[str]) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    suffix = name[name.rfind(".") :] if "." in name else ""
    return suffix in _CODE_SUFFIXES or name in _CODE_NAMES or bool(body and body[0].startswith("#!"))
