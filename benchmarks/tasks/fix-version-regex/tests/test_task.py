"""Outcome checks for fix-version-regex."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
sys.dont_write_bytecode = True
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

OTHER = """# Changelog

## [Unreleased]

## [12.0.11] - 2025-01-30
- Big one.

## [12.0.9] - 2024-12-24

## [2.31.100] - 2020-07-01

## [2.4.0] - 2019-01-01
"""


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


def test_cli_reports_latest_release():
    proc = subprocess.run(
        [sys.executable, "changelog.py", "CHANGELOG.md"],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "1.10.0"


def test_multi_digit_versions(tmp_path):
    changelog = load("changelog")
    assert changelog.releases(OTHER) == [
        ((12, 0, 11), "2025-01-30"),
        ((12, 0, 9), "2024-12-24"),
        ((2, 31, 100), "2020-07-01"),
        ((2, 4, 0), "2019-01-01"),
    ]
    assert changelog.latest(OTHER) == "12.0.11"
    path = tmp_path / "CHANGES.md"
    path.write_text(OTHER)
    proc = subprocess.run(
        [sys.executable, "changelog.py", str(path)], cwd=WORKDIR, env=ENV, capture_output=True, text=True, timeout=30
    )
    assert proc.stdout.strip() == "12.0.11"


def test_single_digit_versions_still_work():
    changelog = load("changelog")
    text = "## [Unreleased]\n\n## [0.2.1] - 2021-02-03\n\n## [0.10.0] - 2021-05-06\n"
    assert changelog.releases(text) == [((0, 2, 1), "2021-02-03"), ((0, 10, 0), "2021-05-06")]
    assert changelog.latest(text) == "0.10.0"
