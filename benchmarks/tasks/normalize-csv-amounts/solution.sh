#!/bin/bash
set -e
python3 - <<'PY'
import csv

with open("expenses.csv", newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
for row in rows[1:]:
    raw = row[2].replace("€", "").replace(" ", "").replace(",", ".")
    row[2] = f"{float(raw):.2f}"
with open("expenses.csv", "w", newline="", encoding="utf-8") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
PY
cat expenses.csv
python3 total.py
