"""The start of a data task's first reply (session.data_script), and a run through `agentcli solve`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from agentcli.session.data_script import script_start
from tests.conftest import git
from tests.test_solve import solve_json

PROGRAM_LOOK = "python3 main.py data/orders.csv"


def test_each_input_the_task_names_is_read_as_its_kind() -> None:
    task = "Convert data/users.json to data/users.csv: a header row, then one row per user."
    start = script_start(task, ["data/users.json"], ["data/users.csv"], [])
    assert (
        start == '```python\nimport csv\nimport json\n\nwith open("data/users.json") as f:\n    users = json.load(f)\n'
    )
    task = "Merge config/defaults.json and config/local.json into config/merged.json."
    start = script_start(task, ["config/defaults.json", "config/local.json"], ["config/merged.json"], [])
    assert "    defaults = json.load(f)\n" in (start or "") and "    local = json.load(f)\n" in (start or "")
    start = script_start("Remove duplicate rows of contacts.csv.", ["contacts.csv"], [], [])
    assert (
        start
        == '```python\nimport csv\n\nwith open("contacts.csv", newline="") as f:\n    rows = list(csv.reader(f))\n'
    )
    start = script_start("Count the requests in logs/access.log by status.", ["logs/access.log"], [], [])
    assert start == '```python\nwith open("logs/access.log") as f:\n    lines = f.read().splitlines()\n'


def test_no_script_is_begun_where_the_task_is_no_data_task() -> None:
    files = ["data/orders.csv", "config.yaml", "debug.log"]
    assert script_start("`python3 main.py data/orders.csv` crashes.", files, [], [PROGRAM_LOOK]) is None
    assert script_start("make the report read config.yaml", files, [], []) is None  # no reader in the stdlib
    assert script_start("debug.log was committed by mistake: untrack it", files, [], []) is None
    assert script_start("Write data/new.json with the totals.", files, ["data/new.json"], []) is None  # no input


def test_a_data_task_goes_on_from_its_begun_script(failing_repo: Path, tmp_path: Path) -> None:
    (failing_repo / "users.json").write_text(json.dumps([{"id": 1, "name": "Ada", "admin": True}]))
    git(failing_repo, "add", "users.json")
    git(failing_repo, "commit", "-qm", "users")
    rest = (
        'with open("users.csv", "w", newline="") as f:\n    writer = csv.writer(f)\n'
        '    writer.writerow(["id", "name"])\n'
        '    for user in users:\n        writer.writerow([user["id"], user["name"]])\n'
        "```"
    )
    replies = tmp_path / "replies.json"
    replies.write_text(
        json.dumps({"replies": [rest, "```bash\ncat users.csv\n```", "DONE: converted"], "continues_replies": True})
    )
    task = "Convert users.json to users.csv with the columns id, name."
    result, events = solve_json(failing_repo, task, f"scripted:{replies}")
    first = next(e["text"] for e in events if e["type"] == "model_replied")
    assert first.startswith(
        '```python\nimport csv\nimport json\n\nwith open("users.json") as f:\n    users = json.load(f)\n'
    )
    assert result.returncode == 0 and events[-1]["status"] == "finished"
    with open(failing_repo / "users.csv", newline="") as f:
        assert list(csv.reader(f)) == [["id", "name"], ["1", "Ada"]]
