#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("report/loader.py")
s = p.read_text()
s = s.replace("import csv\n", "import csv\nimport re\n", 1)
s = s.replace(
    '    return header.strip().lower().replace(" ", "_")\n',
    '    return re.sub(r"[^a-z0-9]+", "_", header.strip().lower()).strip("_")\n',
)
p.write_text(s)
PY
python3 main.py data/orders.csv
