"""Outcome checks for add-subcommand (each check works on its own copy of the todo file)."""

import json
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
TODOS = [
    {"id": 1, "text": "water the plants", "done": False},
    {"id": 2, "text": "fix the bike", "done": False},
    {"id": 5, "text": "call mum", "done": True},
]


def todo(path: Path, *args: str):
    return subprocess.run(
        [sys.executable, "todo.py", "--file", str(path), *args],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def todo_file(tmp_path: Path) -> Path:
    path = tmp_path / "todos.json"
    path.write_text(json.dumps(TODOS))
    return path


def test_done_marks_only_that_todo(tmp_path):
    path = todo_file(tmp_path)
    proc = todo(path, "done", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [t["done"] for t in json.loads(path.read_text())] == [False, True, True]
    listing = todo(path, "list").stdout.splitlines()
    assert listing == ["[ ] 1 water the plants", "[x] 2 fix the bike", "[x] 5 call mum"]


def test_done_twice_is_fine(tmp_path):
    path = todo_file(tmp_path)
    assert todo(path, "done", "5").returncode == 0
    assert [t["done"] for t in json.loads(path.read_text())] == [False, False, True]


def test_unknown_id_fails(tmp_path):
    path = todo_file(tmp_path)
    proc = todo(path, "done", "3")
    assert proc.returncode == 1
    assert (proc.stdout + proc.stderr).strip()
    assert json.loads(path.read_text()) == TODOS


def test_add_and_list_still_work(tmp_path):
    path = tmp_path / "new.json"
    assert todo(path, "add", "first").returncode == 0
    assert todo(path, "add", "second").returncode == 0
    assert todo(path, "list").stdout.splitlines() == ["[ ] 1 first", "[ ] 2 second"]
