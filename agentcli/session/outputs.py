"""Files a task asks for: which they are, and whether what was written there is of their kind.

"Write the ERROR line to root_cause.txt" answered by printing the line, or "write status_counts.csv
with a header row `status,count`" answered by `uniq -c` output: a small model says it is done either
way. The file names a task uses tell what must exist afterwards, and a .csv or .json file must be one.
"""

from __future__ import annotations

import csv
import io
import json
import re

from agentcli.context.summary import cut_middle
from agentcli.session.first_looks import QUOTED

# A file name in a task: a path ending in an extension that names a file, not a version or "e.g.".
_NAMED_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-][\w.-]*\.(?:txt|csv|tsv|json|jsonl|md|rst|py|sh|log|ya?ml|toml|ini|cfg|html|xml|sql)"
    r"|(?:[\w-]+/)*\.(?:gitignore|gitattributes|dockerignore|editorconfig))"
    r"(?![\w/-])",
    re.IGNORECASE,
)
# A header the task quotes: `status,count`; or the columns it lists: "the columns id, name, email".
_QUOTED_HEADER = re.compile(r"^[\w .-]+(?:,[\w .-]+)+$")
# Shell text tools get data formats wrong; the objection says what gets them right.
_PYTHON_WRITES = "A ```python block using the {module} module writes it reliably."
# What a task says of its one result: "Write just the number to todo_count.txt", "copied exactly as one line".
_NUMBER_ONLY = re.compile(r"\b(?:just|only) (?:the|a) (?:number|count|total)\b", re.IGNORECASE)
_ONE_LINE = re.compile(r"\b(?:as|on|in) (?:one|a single) line\b", re.IGNORECASE)
_COLUMNS = re.compile(r"\bcolumns?\s+(`?\w+`?(?:\s*,\s*`?\w+`?)*(?:,?\s+and\s+`?\w+`?)?)", re.IGNORECASE)


def named_outputs(task: str, files: list[str]) -> list[str]:
    """Files the task names that the repository does not have: the files it asks to be written
    ("write the ERROR line to root_cause.txt", "Convert data/users.json to data/users.csv").

    Not a name in a quoted command (`./count.py < file.txt` is an example of its use), nor one
    that is short for a file here (local.json for config/local.json)."""
    present = set(files)
    basenames = {name.rsplit("/", 1)[-1] for name in files}
    prose = QUOTED.sub(lambda quoted: "" if re.search(r"\s", quoted.group(1)) else quoted.group(1), task)
    found = dict.fromkeys(name.removeprefix("./") for name in _NAMED_FILE.findall(prose))
    return [name for name in found if name not in present and name not in basenames]


def output_problem(name: str, text: str, task: str, *, only_output: bool = True) -> str | None:
    """What is wrong with `text` as the content of the file `name` the task asks for, or None. What the
    task says of "the" result (just a number, one line) holds for its `only_output`."""
    lines = [line for line in text.splitlines() if line.strip()]
    if only_output and lines and _NUMBER_ONLY.search(task) and not re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", text):
        return f"{name} should hold just the number, as the task says, but it holds: {cut_middle(text.strip(), 200)}"
    if only_output and len(lines) > 1 and _ONE_LINE.search(task):
        count = len(lines)
        return (
            f"{name} should be one line, as the task says, but it has {count}: choose the one line the task asks for."
        )
    if name.lower().endswith(".json"):
        try:
            json.loads(text)
        except ValueError as e:
            return f"{name} is not valid JSON ({e}). {_PYTHON_WRITES.format(module='json')}"
        return None
    if not name.lower().endswith(".csv"):
        return None
    if not lines:
        return None  # an empty file has its own objection
    widths = [len(row) for row in csv.reader(io.StringIO("\n".join(lines)))]
    odd = next((i for i, width in enumerate(widths) if width < 2 or width != widths[0]), None)
    if odd is not None:
        shown = lines[odd].strip()
        problem = f"{name} is not comma-separated CSV with the same columns on every line: line {odd + 1} is `{shown}`."
        return f"{problem} {_PYTHON_WRITES.format(module='csv')}"
    header = _expected_header(task)
    if header is not None and (first := lines[0].strip()) != header:
        problem = f"the first line of {name} should be the header `{header}`, as the task says, but it is `{first}`."
        return f"{problem} {_PYTHON_WRITES.format(module='csv')}"
    return None


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
