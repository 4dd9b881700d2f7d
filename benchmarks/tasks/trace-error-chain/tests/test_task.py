"""Outcome checks for trace-error-chain."""

import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ORIGINAL_CSV = (Path(__file__).parent / "orders.csv.orig").read_text()
EXPECTED = """\
Initech     2,000.00
Acme        1,560.50
Globex        145.00
Umbrella       15.00
TOTAL       3,720.50"""


def report(path):
    return subprocess.run(
        [sys.executable, "main.py", str(path)],
        cwd=WORKDIR,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_report_for_the_export():
    proc = report("data/orders.csv")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip("\n") == EXPECTED


def test_report_for_another_export(tmp_path):
    other = tmp_path / "march.csv"
    other.write_text('Order ID,Customer,Amount (EUR),Date\n1,Zeta,10.25,2024-03-09\n2,Zeta,"1,000.00",2024-03-10\n')
    proc = report(other)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["Zeta", "1,010.25", "TOTAL", "1,010.25"]


def test_data_unchanged():
    assert (WORKDIR / "data" / "orders.csv").read_text() == ORIGINAL_CSV
