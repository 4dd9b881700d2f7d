#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

path = Path("reconcile.py")
text = path.read_text()
start = text.index("def unpaid(")
end = text.index("def main(")
fast = '''def unpaid(invoices, payments):
    paid = {payment["ref"] for payment in payments}
    return [invoice for invoice in invoices if invoice["ref"] not in paid]


def duplicates(payments):
    counts = {}
    for payment in payments:
        counts[payment["ref"]] = counts.get(payment["ref"], 0) + 1
    return [(ref, n) for ref, n in counts.items() if n > 1]


'''
path.write_text(text[:start] + fast + text[end:])
PY
python3 reconcile.py data/invoices.csv data/payments.csv
