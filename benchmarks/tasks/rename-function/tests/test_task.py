"""Outcome checks for rename-function."""

import os
import re
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def py(*args):
    return subprocess.run([sys.executable, *args], cwd=WORKDIR, env=ENV, capture_output=True, text=True, timeout=60)


def python_files():
    return [p for p in WORKDIR.rglob("*.py") if ".git" not in p.parts]


def test_old_name_gone():
    old = re.compile(r"\bcalc_total\b")
    leftovers = [str(p.relative_to(WORKDIR)) for p in python_files() if old.search(p.read_text())]
    assert leftovers == []


def test_new_name_defined_and_used():
    probe = (
        "from shop.pricing import compute_total, calc_subtotal\n"
        "from shop.cart import Cart\n"
        "import shop.pricing as p\n"
        "assert not hasattr(p, 'calc_total')\n"
        "c = Cart(0.5); c.add('x', 2.0, 3)\n"
        "print(compute_total([('a', 10.0, 1)], 0.25), calc_subtotal([('a', 1.5, 2)]), c.total())\n"
    )
    proc = py("-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["12.5", "3.0", "9.0"]


def test_script_still_works():
    proc = py("checkout.py", "0.2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "37.20"


def test_repo_tests_pass():
    proc = py("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "4 passed" in proc.stdout
