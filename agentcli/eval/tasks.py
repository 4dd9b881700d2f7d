"""Task folders: discovery and validation.

A task is a folder holding `instruction.md`, `repo/`, `tests/` and optionally `solution.sh` and
`task.toml` (difficulty, category); its name is the task id. A Harbor task (`task.toml` and
`environment/`) is read by `harbor_spec.py`. A folder that is not a valid task is
kept as a `Task` with a `problem`, so the suite reports it and runs the rest.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from agentcli.errors import UsageError
from agentcli.eval.harbor_spec import HarborSpec, is_harbor_task, read_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class Task:
    id: str
    dir: Path
    instruction: str = ""
    difficulty: str = ""
    category: str = ""
    problem: str = ""  # why the folder is not a runnable task; empty when it is
    harbor: HarborSpec | None = None  # a Harbor task (see harbor.py); None: agentcli's own layout

    @property
    def solution(self) -> Path:
        return self.dir / "solution.sh"

    @property
    def repo(self) -> Path:
        return self.dir / "repo"

    @property
    def tests(self) -> Path:
        return self.dir / "tests"


def load_task(folder: Path) -> Task:
    """Read one task folder; what is wrong with it goes to `problem`, never to an exception."""
    task = Task(id=folder.name, dir=folder)
    problems: list[str] = []
    if is_harbor_task(folder):
        task.harbor, problems = read_spec(folder)
        if task.harbor.layout == "harbor":
            problems += _read_instruction(task)
        else:  # the older Terminal-Bench layout keeps it in task.yaml
            task.instruction = task.harbor.instruction
        task.difficulty, task.category = task.harbor.difficulty, task.harbor.category
        task.problem = "; ".join(problems)
        return task
    problems += _read_instruction(task)
    if not task.repo.is_dir():
        problems.append("missing repo/")
    if not task.tests.is_dir():
        problems.append("missing tests/")
    elif not any(task.tests.rglob("test_*.py")) and not any(task.tests.rglob("*_test.py")):
        problems.append("tests/ holds no test_*.py file")
    meta = folder / "task.toml"
    if meta.is_file():
        try:
            data = tomllib.loads(meta.read_text(encoding="utf-8"))
            task.difficulty = str(data.get("difficulty", ""))
            task.category = str(data.get("category", ""))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            problems.append(f"task.toml: {e}")
    task.problem = "; ".join(problems)
    return task


def _read_instruction(task: Task) -> list[str]:
    """Read `instruction.md` into the task; what is wrong with it."""
    instruction = task.dir / "instruction.md"
    if not instruction.is_file():
        return ["missing instruction.md"]
    try:
        task.instruction = instruction.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        return [f"cannot read instruction.md: {e}"]
    return [] if task.instruction else ["instruction.md is empty"]


def is_task_folder(path: Path) -> bool:
    return path.is_dir() and not path.name.startswith((".", "_"))


def load_suite(suite: Path, ids: list[str] | None = None) -> list[Task]:
    """The suite's tasks in id order, or only those named; an unknown name is a usage error."""
    if not suite.is_dir():
        raise UsageError(f"suite directory not found: {suite}")
    suite = suite.resolve()  # task paths are handed to processes that run elsewhere
    folders = sorted((p for p in suite.iterdir() if is_task_folder(p)), key=lambda p: p.name)
    if not folders:
        raise UsageError(f"no task folders in {suite}")
    if ids:
        known = {p.name: p for p in folders}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise UsageError(f"unknown task(s) in {suite}: {', '.join(unknown)}")
        folders = [known[i] for i in dict.fromkeys(ids)]
    return [load_task(p) for p in folders]


def split_ids(values: list[str] | None) -> list[str]:
    """`--tasks a,b --tasks c` -> [a, b, c]."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]
