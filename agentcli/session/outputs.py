"""What a task asks to exist afterwards: the files it names, and whether what was written there is of
their kind.

"Write the ERROR line to root_cause.txt" answered by printing the line, or "write status_counts.csv
with a header row `status,count`" answered by `uniq -c` output: a small model says it is done either
way. The file names a task uses tell what must exist afterwards, and a .csv or .json file must be one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from functools import partial

from agentcli.context.summary import cut_middle
from agentcli.prompts import render

# A file name in a task: a path ending in an extension that names a file, not a version or "e.g.".
_NAMED_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-][\w.-]*\.(?:txt|csv|tsv|json|jsonl|md|rst|py|sh|log|ya?ml|toml|ini|cfg|html|xml|sql)"
    r"|(?:[\w-]+/)*\.(?:gitignore|gitattributes|dockerignore|editorconfig))"
    r"(?![\w/-])",
    re.IGNORECASE,
)
# Text the task quotes between backticks.
QUOTED = re.compile(r"`([^`\n]+)`")
# A header the task quotes: `status,count`; or the columns it lists: "the columns id, name, email".
_QUOTED_HEADER = re.compile(r"^[\w .-]+(?:,[\w .-]+)+$")
# What a task says of its one result: "Write just the number to todo_count.txt", "copied exactly as one line".
_NUMBER_ONLY = re.compile(r"\b(?:just|only) (?:the|a) (?:number|count|total)\b", re.IGNORECASE)
_ONE_LINE = re.compile(r"\b(?:as|on|in) (?:one|a single) line\b", re.IGNORECASE)
_COLUMNS = re.compile(r"\bcolumns?\s+(`?\w+`?(?:\s*,\s*`?\w+`?)*(?:,?\s+and\s+`?\w+`?)?)", re.IGNORECASE)


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


_COPY = re.compile(r"\bcop(?:y|ies|ied)\b|\bduplicate", re.IGNORECASE)


def copied_input(name: str, text: str, task: str, read: Callable[[str], str | None]) -> str | None:
    """The objection when the asked file `name` holds just the text of a file the task names as its
    input (`cp config/defaults.json config/merged.json` for "start from defaults.json and apply
    local.json on top"); `read` gives a repository file's text, None where there is none."""
    if not text.strip() or _COPY.search(task):
        return None
    for named in _named_files(task):
        if named != name and (read(named) or "").strip() == text.strip():
            return render("objections/copied_input", name=name, source=named)
    return None


# A task that merges files: "apply config/local.json on top of config/defaults.json", "merge a.json into b.json".
_MERGE = re.compile(r"\bmerg(?:e|es|ed|ing)\b|\bon top of\b", re.IGNORECASE)


def dropped_key(name: str, text: str, task: str, read: Callable[[str], str | None]) -> str | None:
    """The objection when the JSON object `name` that a merge task asks for lacks a key that a JSON
    input the task names has, at a level where the result still holds an object: "nested objects are
    merged key by key" answered with `{**defaults, **local}`, which drops the defaults' nested keys."""
    if not name.lower().endswith(".json") or not _MERGE.search(_NAMED_FILE.sub(" ", task)):
        return None
    if (result := _json_object(text)) is None:
        return None
    for named in _named_files(task):
        given = _json_object(read(named) or "") if named != name and named.lower().endswith(".json") else None
        if given is None:
            continue
        if lost := _lost_key(given, result):
            return render("objections/dropped_key", name=name, key=".".join(lost), source=named)
    return None


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _lost_key(given: dict, result: dict) -> list[str] | None:
    """The path of the first key of `given` missing from `result`, looking into the objects both hold."""
    for key, value in given.items():
        if key not in result:
            return [key]
        if isinstance(value, dict) and isinstance(result[key], dict) and (lost := _lost_key(value, result[key])):
            return [key, *lost]
    return None


def output_problem(name: str, text: str, task: str, *, only_output: bool = True) -> str | None:
    """What is wrong with `text` as the content of the file `name` the task asks for, or None. What the
    task says of "the" result (just a number, one line) holds for its `only_output`, unless that is a
    program: "a script count.sh that prints only the number" speaks of what it prints."""
    lines = [line for line in text.splitlines() if line.strip()]
    given = [q for sentence in _CLAUSE.split(task) if name in sentence for q in QUOTED.findall(sentence)]
    if text.strip() and text.strip() in (q.strip() for q in given):
        return None  # the content the task gives for it, word for word ("x.json containing just `{}`")
    only_output = only_output and not is_program(name)
    if only_output and lines and _NUMBER_ONLY.search(task) and not re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", text):
        return render("objections/not_just_a_number", name=name, text=cut_middle(text.strip(), 200))
    if only_output and len(lines) > 1 and _ONE_LINE.search(task):
        return render("objections/not_one_line", name=name, count=len(lines))
    # Shell text tools get data formats wrong; the objection says what gets them right.
    malformed = partial(render, "objections/malformed_output", name=name)
    if name.lower().endswith(".json"):
        try:
            value = json.loads(text)
        except ValueError as e:
            return malformed(problem="invalid_json", error=e, module="json")
        if value in ({}, [], None, ""):
            # `echo '{}' > merged.json`: a placeholder for the result, not the result.
            return malformed(problem="empty_json", text=text.strip(), module="json")
        return None
    if not name.lower().endswith(".csv"):
        return None
    if not lines:
        return None  # an empty file has its own objection
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    widths = [len(row) for row in rows]
    odd = next((i for i, width in enumerate(widths) if width < 2 or width != widths[0]), None)
    if odd is not None:
        return malformed(problem="ragged_csv", line=odd + 1, text=lines[odd].strip(), module="csv")
    if len(lines) == 1:
        return malformed(problem="no_rows", text=lines[0].strip(), module="csv")
    header, first = _expected_header(task), lines[0].strip()
    if header is not None and first != header:
        return malformed(problem="wrong_header", header=header, text=first, module="csv")
    if (again := next((i for i, line in enumerate(lines[1:], 2) if line.strip() == first), None)) is not None:
        return render("objections/header_again", header=first, name=name, line=again)
    return _unsorted_rows(name, rows, task)


# "one row per status code ..., sorted by status code"; "sorted by count, highest first".
_SORTED_BY = re.compile(r"\b(?:sorted|ordered|sort(?: them| it| the rows)?)\s+by\s+(?:the\s+)?([^.;]+)", re.IGNORECASE)
_DESCENDING = re.compile(r"\b(?:descending|decreasing|reverse|(?:highest|largest|biggest|most|newest)\s+first)\b", re.I)


def _unsorted_rows(name: str, rows: list[list[str]], task: str) -> str | None:
    """The objection when the task says how the rows are sorted and the CSV's rows (after the header)
    are not: the column is the first of the header the words after "sorted by" name."""
    if (match := _SORTED_BY.search(task)) is None:
        return None
    said = match.group(1).lower()
    words = " ".join(re.findall(r"\w+", said)[:3])  # "status code", "count, highest first"
    header = [cell.strip().lower() for cell in rows[0]]
    spoken = [re.escape(cell.replace("_", " ")) for cell in header]
    column = next((i for i, cell in enumerate(spoken) if cell and re.search(rf"\b{cell}\b", words)), None)
    if column is None:
        return None
    values = [row[column].strip() for row in rows[1:]]
    numeric = all(re.fullmatch(r"-?\d+(?:\.\d+)?", value) for value in values)
    keys: list[float] | list[str] = [float(value) for value in values] if numeric else values
    descending = _DESCENDING.search(said) is not None
    if keys == sorted(keys, reverse=descending):  # type: ignore[type-var]
        return None
    return render("objections/unsorted_rows", name=name, column=header[column], descending=descending, values=values)


# Files whose text is a program: what the task says it prints is not what they hold.
PROGRAM_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl")


def is_program(name: str) -> bool:
    return name.lower().endswith(PROGRAM_SUFFIXES)


def _expected_header(task: str) -> str | None:
    """The header row the task asks for, as a CSV line: quoted (`status,count`) or listed ("with the
    columns id, name, email"); None when it names none."""
    quoted = next((q for q in QUOTED.findall(task) if _QUOTED_HEADER.match(q)), None)
    if quoted is not None:
        return quoted
    listed = _COLUMNS.search(task)
    if listed is None:
        return None
    names = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", listed.group(1).replace("`", ""))
    return ",".join(names) if len(names) >= 2 else None
