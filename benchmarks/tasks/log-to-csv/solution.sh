#!/bin/bash
set -e
python3 - <<'PY'
import collections
import csv
import re

counts = collections.Counter()
with open("logs/access.log") as f:
    for line in f:
        match = re.search(r'" (\d{3}) ', line)
        if match:
            counts[int(match.group(1))] += 1
with open("status_counts.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["status", "count"])
    for status in sorted(counts):
        writer.writerow([status, counts[status]])
PY
cat status_counts.csv
