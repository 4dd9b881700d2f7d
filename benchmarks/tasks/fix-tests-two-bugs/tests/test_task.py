"""Outcome checks for fix-tests-two-bugs."""

import math
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def py(*args):
    return subprocess.run([sys.executable, *args], cwd=WORKDIR, env=ENV, capture_output=True, text=True, timeout=60)


def test_suite_passes():
    proc = py("-m", "pytest", "-q", "-p", "no:cacheprovider", "test_shapes.py")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "3 passed" in proc.stdout


def test_tests_unchanged():
    original = (Path(__file__).parent / "data" / "test_shapes.py.orig").read_text()
    assert (WORKDIR / "test_shapes.py").read_text() == original


def test_shapes_behave():
    probe = (
        "from shapes import Circle, Square, total_area\n"
        "print(Circle(3).area(), Circle(0.5).perimeter(), Square(2.5).perimeter(), "
        "total_area([Square(1), Square(2)]))\n"
    )
    proc = py("-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    values = [float(v) for v in proc.stdout.split()]
    expected = [9 * math.pi, math.pi, 10.0, 5.0]
    assert all(math.isclose(v, e) for v, e in zip(values, expected, strict=True)), values
