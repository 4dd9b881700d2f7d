"""Outcome checks for implement-from-docstring."""

import importlib
import os
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
sys.dont_write_bytecode = True


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1h30m", 5400),
        ("45s", 45),
        ("2h", 7200),
        ("1h5m10s", 3910),
        ("90m", 5400),
        ("0s", 0),
        ("10m5s", 605),
        ("  3h  ", 10800),
        ("1h0m1s", 3601),
    ],
)
def test_valid(text, seconds):
    assert load("durations").parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "   ", "10", "1x", "1m1h", "h", "1h1h", "-5s", "abc", "1.5h"])
def test_invalid(text):
    with pytest.raises(ValueError):
        load("durations").parse_duration(text)


def test_round_trip():
    durations = load("durations")
    for seconds in (1, 59, 60, 61, 3599, 3600, 86399):
        assert durations.parse_duration(durations.format_duration(seconds)) == seconds
