"""Outcome checks for normalize-csv-amounts."""

import csv
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])

EXPECTED = [
    ["date", "category", "amount", "note"],
    ["2024-03-01", "travel", "12.50", "Train to Lyon"],
    ["2024-03-02", "food", "8.50", "Lunch, with the team"],
    ["2024-03-02", "office", "3.00", "Pens"],
    ["2024-03-04", "food", "7.20", "Coffee beans"],
    ["2024-03-05", "travel", "120.00", 'Hotel "Le Petit"'],
    ["2024-03-06", "office", "0.99", "Stickers"],
    ["2024-03-07", "food", "15.00", "Pizza"],
    ["2024-03-08", "travel", "4.05", "Metro"],
]


def rows():
    with (WORKDIR / "expenses.csv").open(newline="", encoding="utf-8") as f:
        return [row for row in csv.reader(f) if row]


def test_amounts_are_plain_with_two_decimals():
    assert [row[2].strip() for row in rows()] == [row[2] for row in EXPECTED]


def test_other_columns_unchanged():
    got = rows()
    assert len(got) == len(EXPECTED)
    for row, want in zip(got, EXPECTED, strict=True):
        assert len(row) == 4
        assert [row[0], row[1], row[3]] == [want[0], want[1], want[3]]


def test_total_script_works():
    proc = subprocess.run(
        [sys.executable, "total.py"],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    totals = {line.split()[0]: line.split()[1] for line in proc.stdout.splitlines() if line.strip()}
    assert totals == {"food": "30.70", "office": "3.99", "travel": "136.55"}
