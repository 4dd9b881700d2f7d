"""Outcome checks for bump-version."""

import os
import re
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
OLD_HISTORY = """## 1.4.2
- Fix the wind direction for southern cities.

## 1.4.1
- Retry once when the weather service times out.

## 1.4.0
- Add `--version`. Upgrading from 1.3.x needs no changes.
"""


def read(name):
    return (WORKDIR / name).read_text()


def test_pyproject_version():
    assert re.search(r'^version = "1\.5\.0"$', read("pyproject.toml"), re.M)
    assert "1.4.2" not in read("pyproject.toml")


def test_package_version():
    proc = subprocess.run(
        [sys.executable, "-m", "weather.cli", "--version"],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "weather 1.5.0"


def test_readme_install_line():
    readme = read("README.md")
    assert "pip install weather==1.5.0" in readme
    assert "1.4.2" not in readme


def test_changelog_new_heading_and_history_kept():
    changelog = read("CHANGELOG.md")
    assert changelog.rstrip().endswith(OLD_HISTORY.rstrip())
    headings = re.findall(r"^## (\S+)", changelog, re.M)
    assert headings[:2] == ["1.5.0", "1.4.2"]
