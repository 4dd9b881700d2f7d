"""Print one line per customer: id, full name, email, tags. Reads version 2 records."""

import json
from pathlib import Path

for path in sorted(Path("data/customers").glob("*.json")):
    record = json.loads(path.read_text())
    if record.get("version") != 2:
        raise SystemExit(f"{path}: not a version 2 record, migrate it first (see SCHEMA.md)")
    name = " ".join(part for part in (record["name"]["first"], record["name"]["last"]) if part)
    print(f"{record['id']:>3}  {name:<30} {record['contact']['email']:<30} {','.join(record['tags'])}")
