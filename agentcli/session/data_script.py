"""The start of the script a data task's first reply is: its inputs read.

Asked to turn users.json into a CSV, a small model writes `csv.writer(f).writerows(users)` over a
list of dicts, or a one-liner the shell mangles, then fixes the header and loses the rows. Reading
the inputs is the part it gets wrong for nothing: begun with the imports and each input the task
names read into a variable (JSON parsed, CSV rows, log lines), the model writes only the work.
"""

from __future__ import annotations

import json
import keyword
from pathlib import PurePosixPath

from agentcli.prompts import render
from agentcli.session.first_looks import data_task_files

# How each kind of input is read, and the variable it is read into where the task names one input.
_READERS = {
    ".json": ("json", "json.load(f)", None),
    ".csv": ("csv", "list(csv.reader(f))", "rows"),
    ".tsv": ("csv", 'list(csv.reader(f, delimiter="\\t"))', "rows"),
    ".log": (None, "f.read().splitlines()", "lines"),
    ".jsonl": ("json", "[json.loads(line) for line in f if line.strip()]", "records"),
}
_WRITERS = {".json": "json", ".csv": "csv", ".tsv": "csv"}


def script_start(task: str, files: list[str], outputs: list[str], looks: list[str]) -> str | None:
    """The first lines of the ```python block the first reply begins with, or None where the task is
    no data task (see `data_task_files`) or names an input Python's standard library cannot read
    (YAML, XML)."""
    named = data_task_files(task, looks)
    present = set(files)
    inputs = [name for name in named if name in present]
    if not inputs or any(PurePosixPath(name).suffix.lower() not in _READERS for name in inputs):
        return None
    modules = {_READERS[PurePosixPath(name).suffix.lower()][0] for name in inputs}
    modules |= {_WRITERS.get(PurePosixPath(name).suffix.lower()) for name in outputs}
    used: set[str] = set()
    reads = []
    for name in inputs:
        module, read, single = _READERS[PurePosixPath(name).suffix.lower()]
        variable = _variable(name, single if len(inputs) == 1 else None, used)
        reads.append({"name": json.dumps(name), "csv": module == "csv", "variable": variable, "read": read})
    return render("begun/data_script", modules=sorted(m for m in modules if m), inputs=reads)


def _variable(path: str, preferred: str | None, used: set[str]) -> str:
    """A name for what `path` holds: `preferred`, else the file's stem where it is a fresh identifier."""
    stem = PurePosixPath(path).stem.lower().replace("-", "_")
    name = preferred or (stem if stem.isidentifier() and not keyword.iskeyword(stem) else "data")
    while name in used:
        name += "_"
    used.add(name)
    return name
