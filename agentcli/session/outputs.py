"""What a task asks to exist afterwards: the files it names that the repository does not have
("write the ERROR line to root_cause.txt"). Code a reply echoes with no file named may go to the one
Python file the task asks for (agent.placing), and a task that asks for a new file is shown no whole
source file before its first reply (session.task_setup)."""

from __future__ import annotations

import re

# A file name in a task: a path ending in an extension that names a file, not a version or "e.g.".
_NAMED_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-][\w.-]*\.(?:txt|csv|tsv|json|jsonl|md|rst|py|sh|log|ya?ml|toml|ini|cfg|html|xml|sql)"
    r"|(?:[\w-]+/)*\.(?:gitignore|gitattributes|dockerignore|editorconfig))"
    r"(?![\w/-])",
    re.IGNORECASE,
)
# Text the task quotes between backticks.
QUOTED = re.compile(r"`([^`\n]+)`")


def _named_files(text: str) -> list[str]:
    """The file paths `text` names, in order, each once (`./` left off)."""
    return list(dict.fromkeys(name.removeprefix("./") for name in _NAMED_FILE.findall(text)))


def named_outputs(task: str, files: list[str], repository_text: str = "") -> list[str]:
    """Files the task names that the repository does not have: the files it asks to be written
    ("write the ERROR line to root_cause.txt", "Convert data/users.json to data/users.csv").

    Not a name in a quoted command (`./count.py < file.txt` is an example of its use), nor one
    that is short for a file here (local.json for config/local.json), nor one the repository's
    files speak of already (a program's settings file: "report.py crashes when settings.toml is
    missing" is about the program, which reads it)."""
    present = set(files)
    basenames = {name.rsplit("/", 1)[-1] for name in files}
    prose = QUOTED.sub(lambda quoted: "" if re.search(r"\s", quoted.group(1)) else quoted.group(1), task)
    return [
        name
        for name in _named_files(prose)
        if name not in present
        and name not in basenames
        and not _mentions(repository_text, name)
        and _asked_to_make(prose, name)
    ]


# What turns a sentence away from making the file it names: "ignore npm-debug.log", "don't create x.yaml".
_NOT_MADE = re.compile(r"\b(?:don't|do not|never|without|no need)\b", re.IGNORECASE)
_IGNORING = re.compile(r"\b(?:ignore|ignored|untrack\w*)\b|\.gitignore\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[.;!?,](?:\s|$)|\n|\b(?:then|but)\b", re.IGNORECASE)


def _asked_to_make(task: str, name: str) -> bool:
    """Whether some clause naming `name` does not turn away from making it (a negation before the name,
    or ignoring anywhere in the clause)."""
    clauses = [clause for clause in _CLAUSE.split(task) if name in clause]
    ignore_file = name.endswith(".gitignore")  # the file that does the ignoring is made, not ignored
    return not clauses or any(
        not _NOT_MADE.search(clause[: clause.find(name)]) and (ignore_file or not _IGNORING.search(clause))
        for clause in clauses
    )


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name.rsplit('/', 1)[-1])}(?![\w-])", text) is not None


# Files whose text is a program (the code a task's named outputs are looked for in).
PROGRAM_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl")


def is_program(name: str) -> bool:
    return name.lower().endswith(PROGRAM_SUFFIXES)
