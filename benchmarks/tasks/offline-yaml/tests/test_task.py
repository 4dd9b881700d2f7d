"""Outcome checks for offline-yaml."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = """\
Weekly quiz: 4 passed (threshold 75)
- Ana
- Ben
- Dev
- Fay"""


def test_report_runs_with_the_standard_library_only():
    # -S: no site-packages, so an installed PyYAML cannot make this pass.
    proc = subprocess.run(
        [sys.executable, "-S", "report.py"],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == EXPECTED


def test_threshold_still_read_from_config_yaml(tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(WORKDIR, work, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    config = work / "config.yaml"
    config.write_text(config.read_text().replace("threshold: 75", "threshold: 90"))
    proc = subprocess.run(
        [sys.executable, "-S", "report.py"],
        cwd=work,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[0] == "Weekly quiz: 2 passed (threshold 90)"
