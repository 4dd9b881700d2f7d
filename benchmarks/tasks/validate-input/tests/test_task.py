"""Outcome checks for validate-input."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
sys.dont_write_bytecode = True


def rectangle():
    sys.path.insert(0, str(WORKDIR))
    try:
        return importlib.import_module("geometry").Rectangle
    finally:
        sys.path.remove(str(WORKDIR))


@pytest.mark.parametrize(
    ("width", "height"),
    [(0, 1), (1, 0), (-2, 3), (2, -1), (-1, -1), ("3", 2), (2, "4"), (None, 2), (3, [1]), (0.0, 2.5)],
)
def test_bad_sizes_raise_value_error(width, height):
    with pytest.raises(ValueError):
        rectangle()(width, height)


@pytest.mark.parametrize(("width", "height", "area"), [(2, 3.5, 7.0), (1, 1, 1), (0.5, 4, 2.0), (10**6, 2, 2 * 10**6)])
def test_good_sizes_still_work(width, height, area):
    r = rectangle()(width, height)
    assert r.area() == area
    assert (r.width, r.height) == (width, height)


def test_repo_tests_pass():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_geometry.py"],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
