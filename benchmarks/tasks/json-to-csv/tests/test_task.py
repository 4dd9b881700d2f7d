"""Outcome checks for json-to-csv."""

import csv
import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = [
    ["id", "name", "email"],
    ["1", "Ada Lovelace", "ada@example.org"],
    ["2", "Alan Turing", "alan@example.org"],
    ["3", "Grace Hopper", "grace@example.org"],
    ["5", "Edsger Dijkstra", "edsger@example.org"],
    ["8", "Barbara Liskov", "barbara@example.org"],
    ["13", "Ken Thompson", "ken@example.org"],
]


def test_csv_rows():
    path = WORKDIR / "data" / "users.csv"
    assert path.is_file()
    with path.open(newline="") as f:
        rows = [[cell.strip() for cell in row] for row in csv.reader(f) if row]
    assert rows == EXPECTED
