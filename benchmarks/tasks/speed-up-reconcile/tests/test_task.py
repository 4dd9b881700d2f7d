"""Outcome checks for speed-up-reconcile."""

import csv
import os
import random
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
LIMIT_S = 2.5  # the linear version needs about 0.2 s here; 2.5 s leaves room for a slow machine

SAMPLE = """UNPAID INV-1003 initech 300.00
UNPAID INV-1005 umbrella 15.75
DUPLICATE INV-1002 2
SUMMARY 5 2 1
"""


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def expected_output(invoices, payments):
    paid = {ref for ref, _, _ in payments}
    counts, order = {}, []
    for ref, _, _ in payments:
        if ref not in counts:
            order.append(ref)
        counts[ref] = counts.get(ref, 0) + 1
    lines = [f"UNPAID {ref} {cust} {amount}" for ref, cust, amount in invoices if ref not in paid]
    doubled = [f"DUPLICATE {ref} {counts[ref]}" for ref in order if counts[ref] > 1]
    lines += doubled
    lines.append(f"SUMMARY {len(invoices)} {len(lines) - len(doubled)} {len(doubled)}")
    return lines


def make_data(tmp_path, n, seed):
    rng = random.Random(seed)
    invoices = [
        (
            f"INV-{100000 + i}",
            rng.choice(["acme", "globex", "initech", "umbrella"]),
            f"{rng.randint(100, 99999) / 100:.2f}",
        )
        for i in range(n)
    ]
    payments = []
    for ref, _, amount in invoices:
        r = rng.random()
        if r < 0.05:
            continue
        copies = 3 if r > 0.995 else 2 if r > 0.97 else 1
        payments += [(ref, amount, f"2024-05-{rng.randint(1, 28):02d}") for _ in range(copies)]
    payments += [("INV-999999", "1.00", "2024-05-30")] * 2
    rng.shuffle(payments)
    write_csv(tmp_path / "invoices.csv", ["ref", "customer", "amount"], invoices)
    write_csv(tmp_path / "payments.csv", ["ref", "amount", "date"], payments)
    return expected_output(invoices, payments)


def run(invoices, payments, timeout):
    return subprocess.run(
        [sys.executable, "reconcile.py", str(invoices), str(payments)],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_sample_output_unchanged():
    proc = run("data/invoices.csv", "data/payments.csv", 30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == SAMPLE


def test_small_generated_input(tmp_path):
    want = make_data(tmp_path, 300, seed=3)
    proc = run(tmp_path / "invoices.csv", tmp_path / "payments.csv", 30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == want


def test_large_input_is_fast(tmp_path):
    want = make_data(tmp_path, 20000, seed=11)
    try:
        proc = run(tmp_path / "invoices.csv", tmp_path / "payments.csv", LIMIT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"reconcile.py took more than {LIMIT_S} s on 20,000 invoices") from None
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == want
