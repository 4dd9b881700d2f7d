"""Outcome checks for fix-import-error."""

import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def run_app(*titles):
    return subprocess.run(
        [sys.executable, "app.py", *titles],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_prints_slugs():
    proc = run_app("Hello World", "  Python 3.12 Release!  ")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["hello-world", "python-3-12-release"]


def test_usage_without_arguments():
    proc = run_app()
    assert proc.returncode == 2
    assert "usage" in proc.stderr
