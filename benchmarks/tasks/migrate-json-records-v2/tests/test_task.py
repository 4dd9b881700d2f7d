"""Outcome checks for migrate-json-records-v2."""

import json
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
CUSTOMERS = WORKDIR / "data" / "customers"

EXPECTED = {
    "c001.json": {
        "version": 2,
        "id": 1,
        "name": {"first": "Ada", "last": "Lovelace"},
        "contact": {"email": "ada@example.org", "phone": "+44 20 7946 0001"},
        "tags": ["vip", "newsletter"],
    },
    "c002.json": {
        "version": 2,
        "id": 2,
        "name": {"first": "Grace", "last": "Brewster Murray Hopper"},
        "contact": {"email": "grace.hopper@navy.example", "phone": None},
        "tags": ["newsletter"],
    },
    "c003.json": {
        "version": 2,
        "id": 3,
        "name": {"first": "Plato", "last": ""},
        "contact": {"email": "plato@academy.example", "phone": None},
        "tags": [],
    },
    "c004.json": {
        "version": 2,
        "id": 4,
        "name": {"first": "Alan", "last": "Turing"},
        "contact": {"email": "alan@example.org", "phone": None},
        "tags": ["beta"],
    },
    "c005.json": {
        "version": 2,
        "id": 5,
        "name": {"first": "Edsger", "last": "W. Dijkstra"},
        "contact": {"email": "ewd@example.nl", "phone": "+31 40 000 1111"},
        "tags": ["beta", "vip", "newsletter"],
    },
    "c006.json": {
        "version": 2,
        "id": 6,
        "name": {"first": "Barbara", "last": "Liskov"},
        "contact": {"email": "barbara.liskov@mit.example", "phone": "617-555-0199"},
        "tags": ["Speaker"],
    },
}


def load(name):
    return json.loads((CUSTOMERS / name).read_text(encoding="utf-8"))


def test_same_files():
    assert sorted(p.name for p in CUSTOMERS.glob("*.json")) == sorted(EXPECTED)


def test_simple_records():
    for name in ("c001.json", "c006.json", "c004.json"):
        assert load(name) == EXPECTED[name], name


def test_tricky_records():
    for name in ("c002.json", "c003.json", "c005.json"):
        assert load(name) == EXPECTED[name], name


def test_report_runs():
    proc = subprocess.run(
        [sys.executable, "report.py"],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(proc.stdout.splitlines()) == 6
