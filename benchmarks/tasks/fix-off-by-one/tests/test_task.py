"""Outcome checks for fix-off-by-one."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
DATA = Path(__file__).parent / "data"
sys.dont_write_bytecode = True
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


def test_repo_tests_pass():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_pager.py"],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_tests_unchanged():
    assert (WORKDIR / "test_pager.py").read_text() == (DATA / "test_pager.py.orig").read_text()


def test_every_page():
    pager = load("pager")
    items = list(range(1, 11))
    assert pager.paginate(items, 2, 3) == [4, 5, 6]
    assert pager.paginate(items, 3, 3) == [7, 8, 9]
    assert pager.paginate(items, 5, 3) == []
    assert pager.paginate(items, 1, 20) == items
