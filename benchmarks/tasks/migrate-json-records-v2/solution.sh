#!/bin/bash
set -e
python3 - <<'PY'
import json
from pathlib import Path

for path in sorted(Path("data/customers").glob("*.json")):
    old = json.loads(path.read_text(encoding="utf-8"))
    if old.get("version") != 1:
        continue
    first, _, last = old["name"].strip().partition(" ")
    new = {
        "version": 2,
        "id": old["id"],
        "name": {"first": first, "last": last.strip()},
        "contact": {"email": old["email"].strip().lower(), "phone": old.get("phone") or None},
        "tags": [tag.strip() for tag in old.get("tags", "").split(",") if tag.strip()],
    }
    path.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
PY
python3 report.py
