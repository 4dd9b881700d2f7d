"""Outcome checks for log-to-csv."""

import csv
import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = [
    ["status", "count"],
    ["200", "56"],
    ["201", "3"],
    ["302", "3"],
    ["304", "5"],
    ["401", "2"],
    ["404", "12"],
    ["500", "2"],
    ["503", "1"],
]


def test_status_counts():
    path = WORKDIR / "status_counts.csv"
    assert path.is_file()
    with path.open(newline="") as f:
        rows = [[cell.strip() for cell in row] for row in csv.reader(f) if row]
    assert rows == EXPECTED
