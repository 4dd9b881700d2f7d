"""Outcome checks for dedupe-csv."""

import csv
import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = [
    ["name", "email", "phone"],
    ["Lee, Ann", "ann.lee@example.com", "555-0101"],
    ["Bob Stone", "bob@example.com", "555-0102"],
    ["Carla Diaz", "carla@example.com", "555-0103"],
    ["Dan Wu", "dan@example.com", "555-0104"],
    ["Eve Park", "eve@example.com", ""],
    ["Frank Ode", "frank@example.org", "555-0105"],
    ["Eve Park", "eve@example.net", "555-0106"],
    ["Gina Holt", "gina@example.com", "555-0107"],
]


def test_duplicates_removed_first_kept_in_order():
    with (WORKDIR / "contacts.csv").open(newline="") as f:
        rows = [[cell.strip() for cell in row] for row in csv.reader(f) if row]
    assert rows == EXPECTED
