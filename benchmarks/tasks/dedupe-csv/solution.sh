#!/bin/bash
set -e
python3 - <<'PY'
import csv

with open("contacts.csv", newline="") as f:
    rows = list(csv.reader(f))
header, body = rows[0], rows[1:]
seen = set()
kept = []
for row in body:
    key = row[1].strip().lower()
    if key not in seen:
        seen.add(key)
        kept.append(row)
with open("contacts.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(kept)
PY
cat contacts.csv
