"""Outcome checks for make-script-executable."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
SCRIPT = WORKDIR / "scripts" / "wordcount.py"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def test_is_executable():
    assert os.access(SCRIPT, os.X_OK)


def test_shebang_names_python3():
    first = SCRIPT.read_text().splitlines()[0]
    assert first.startswith("#!")
    assert "python3" in first


def test_runs_directly():
    proc = subprocess.run(
        ["./scripts/wordcount.py"],
        cwd=WORKDIR,
        env=ENV,
        input="the quick brown fox\njumps\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["2", "5", "26"]
