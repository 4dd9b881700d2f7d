"""Outcome checks for sqlite-top-customers."""

import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = ["Radia Perlman", "Edsger Dijkstra", "Donald Knuth"]


def names():
    path = WORKDIR / "top_customers.txt"
    assert path.is_file(), "top_customers.txt is missing"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_top_three_customers():
    assert names() == EXPECTED


def test_biggest_spender_first():
    assert names()[:1] == EXPECTED[:1]
