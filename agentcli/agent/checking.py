"""Whether a command changed files without showing anything of the result.

Small models write a file, or move one, and declare the task done without ever looking: the rule
"done and checked" is one they skip. The loop asks once for a check when the last command only
changed things.
"""

from __future__ import annotations

import re
import shlex

from agentcli.agent.edits import without_comment_lines

# Programs that change files and print nothing about the result.
WRITERS = frozenset({"mv", "cp", "rm", "touch", "mkdir", "chmod", "chown", "ln", "truncate", "patch", "unzip"})
# A redirect to a file (not 2>&1 or >&2), which turns any program into a writer.
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:
        return part.split()


def _writes(part: str) -> bool:
    words = _words(part)
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if program in WRITERS or (program == "git" and words[1:2] in (["mv"], ["rm"])):
        return True
    if program == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
        return True
    return bool(_file_redirects(part))


# `cat <<'EOF' > file`: a here-document's opening and its end mark.
_HEREDOC = re.compile(r"""<<(-?)\s*(['"]?)(\w+)\2""")


def _without_heredoc_bodies(command: str) -> str:
    """`command` with its here-documents (`<<EOF` and the lines up to `EOF`) left out: they are data."""
    kept: list[str] = []
    end: tuple[str, bool] | None = None
    for line in command.splitlines():
        if end is not None:
            mark, tabs = end
            if (line.lstrip("\t") if tabs else line) == mark:
                end = None
            continue
        if opening := _HEREDOC.search(line):
            end = opening.group(3), opening.group(1) == "-"
        kept.append(_HEREDOC.sub("", line))
    return "\n".join(kept)


def simple_commands(command: str) -> list[str]:
    """The simple commands of `command`, split at `&&`, `||`, `;` and newlines."""
    return [p for p in _SPLIT.split(_without_heredoc_bodies(command)) if p.strip()]


def check_command(command: str) -> str | None:
    """A command that shows what the last change of `command` did, e.g. `cat -n app.py`; None if unknown."""
    parts = [p for p in simple_commands(command) if _writes(p)]
    if not parts:
        return None
    last = parts[-1].strip()
    if redirects := _file_redirects(last):
        return f"cat -n {shlex.quote(redirects[-1][1])}"
    words = _words(last)
    program = words[0].rsplit("/", 1)[-1] if words else ""
    files = [w for w in words[1:] if not w.startswith("-")]
    if not files or program in ("rm", "mkdir", "unzip", "patch", "truncate", "git"):
        return None
    look = "ls -l" if program in ("chmod", "chown", "ln") else "cat -n"
    return f"{look} {shlex.quote(files[-1])}"


# A quoted string (skipped: `echo "a > b"` writes no file), or a `>` or `>>` that writes a file (not
# `2>`, `&>` or `>&2`) and its target.
_FILE_REDIRECT = re.compile(r"""'[^']*'|"[^"]*"|(?<![0-9&>])(>>?)\|?[ \t]*(?![>&])('[^']*'|"[^"]*"|[^\s&|;<>'"]+)""")
# Commands that leave a redirect's file empty on purpose: `> log`, `: > log`, `true > log`.
_EMPTYING = frozenset({"", ":", "true"})


def _file_redirects(part: str) -> list[tuple[str, str]]:
    """(`>` or `>>`, file) for each redirect of a simple command to a file other than /dev/null."""
    found = []
    for match in _FILE_REDIRECT.finditer(part):
        if match.group(1) and (path := match.group(2).strip("'\"")) != "/dev/null":
            found.append((match.group(1), path))
    return found


def overwrites(command: str) -> list[tuple[str, str]]:
    """(file, program) for each `program ... > file` in `command`; a bare `> file`, which empties the
    file on purpose, is left out."""
    found = []
    for part in simple_commands(command):
        words = _words(part)
        program = words[0].rsplit("/", 1)[-1] if words and not words[0].startswith(">") else ""
        if program not in _EMPTYING:
            found += [(path, program) for operator, path in _file_redirects(part) if operator == ">"]
    return found


def appended_files(command: str) -> list[str]:
    """Every file `command` adds to with `>>`."""
    return [path for part in simple_commands(command) for operator, path in _file_redirects(part) if operator == ">>"]


def only_changes(command: str) -> bool:
    """True when `command` changes files and nothing after the last change shows a result."""
    parts = simple_commands(command)
    if not parts:
        return False
    last_write = max((i for i, part in enumerate(parts) if _writes(part)), default=-1)
    return last_write == len(parts) - 1


def command_lines(command: str) -> int:
    """How many commands `command` runs one per line (a small model writes one plan step per line);
    a here-document, a continued line or a compound statement counts as one."""
    if "<<" in command or "\\\n" in command or re.search(r"^\s*(?:if|for|while|case|until)\b", command, re.M):
        return 1
    return max(1, len(without_comment_lines(command).splitlines()))


# The scripts a task is about: shell and Python.
SHELL_AND_PYTHON_SCRIPTS = (".sh", ".bash", ".py")


# Programs that run code, and the filters a check's output may be piped through.
_RUNNERS = frozenset({"python", "python3", "pytest", "node", "bash", "sh"})
_FILTERS = frozenset({"head", "tail", "grep", "wc", "sort", "cat"})
_CD = re.compile(r"^cd\s+\S+$")
# What makes a command more than a run of the code: a background `&`, a process substitution, a
# command substitution, a here-document.
_MORE_THAN_A_RUN = re.compile(r"(?<![&>])&(?![&>])|[<>]\(|\$\(|`|<<")
# Flags that hand an interpreter code on the command line (`python -Bc`, `bash -lc`, `node -e`).
_INLINE_CODE = re.compile(r"^-[A-Za-z]*[ce]|^--(?:eval|print|command)")


def runs_check(command: str) -> bool:
    """Whether `command` only runs code (a program, a script, the tests), after an optional `cd`, with
    its output perhaps piped through a filter: a check the model wrote that can be run again as it is,
    on another version of the code. Writes, git, installs, code given inline and here-documents are not."""
    if _MORE_THAN_A_RUN.search(command):
        return False
    parts = simple_commands(without_comment_lines(command))
    if parts and _CD.match(parts[0].strip()):
        parts = parts[1:]
    if not parts:
        return False
    for part in parts:
        if _writes(part):
            return False
        stages = [_words(stage.strip()) for stage in part.split("|")]
        first = [w for w in stages[0] if not re.match(r"^[A-Za-z_]\w*=", w)]
        if not first or not _runs_code(first):
            return False
        # A filter that only reads: `sort -o FILE` writes, `tail -f` never ends.
        if any(not stage or stage[0] not in _FILTERS or {"-o", "-f", "-F"} & set(stage) for stage in stages[1:]):
            return False
    return True


def _runs_code(words: list[str]) -> bool:
    program, args = words[0], words[1:]
    if program.startswith("./"):
        return True
    # The interpreter's own options come before its script or module; what follows is the program's.
    options = args[: next((i for i, arg in enumerate(args) if not arg.startswith("-") or arg == "-m"), len(args))]
    if program not in _RUNNERS or (program != "pytest" and any(_INLINE_CODE.match(arg) for arg in options)):
        return False
    if program in ("bash", "sh") and all(arg.startswith("-") for arg in args):
        return False  # a shell reading its commands from elsewhere
    # `python3 -m pip install`: an install, not a run of the code.
    module = args[args.index("-m") + 1 : args.index("-m") + 2] if "-m" in args else None
    return module is None or module in (["pytest"], ["unittest"])
