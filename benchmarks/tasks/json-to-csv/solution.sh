#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json

with open("data/users.json") as f:
    users = json.load(f)
with open("data/users.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["id", "name", "email"])
    for user in users:
        writer.writerow([user["id"], user["name"], user["email"]])
PY
cat data/users.csv
