"""Outcome checks for fix-class-bug."""

import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def py(*args):
    return subprocess.run([sys.executable, *args], cwd=WORKDIR, env=ENV, capture_output=True, text=True, timeout=60)


def test_new_inventories_are_independent():
    # A fresh interpreter per check: the shared default lives as long as the module.
    probe = (
        "from inventory import Inventory\n"
        "a = Inventory(); a.add('bolt', 4)\n"
        "b = Inventory(); b.add('nut', 1)\n"
        "c = Inventory()\n"
        "print(a.items(), b.items(), c.items(), a.total(), b.total(), c.total())\n"
    )
    proc = py("-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['bolt'] ['nut'] [] 4 1 0"


def test_removing_from_one_leaves_another_alone():
    probe = (
        "from inventory import Inventory\n"
        "a = Inventory(); a.add('bolt', 2)\n"
        "b = Inventory(); b.add('bolt', 3)\n"
        "a.remove('bolt', 2)\n"
        "print(a.count('bolt'), b.count('bolt'))\n"
    )
    proc = py("-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "0 3"


def test_initial_stock_still_accepted():
    probe = (
        "from inventory import Inventory\n"
        "a = Inventory({'gear': 2}); a.add('gear')\n"
        "print(a.count('gear'), Inventory().count('gear'))\n"
    )
    proc = py("-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "3 0"


def test_repo_tests_pass():
    proc = py("-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inventory.py")
    assert proc.returncode == 0, proc.stdout[-2000:]
