#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("report.py")
s = p.read_text()
s = s.replace("import csv\n\nimport yaml\n", "import csv\n")
s = s.replace(
    "        return yaml.safe_load(f)\n",
    '''        config = {}
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, _, value = line.partition(":")
            value = value.strip()
            config[key.strip()] = int(value) if value.isdigit() else value
        return config
''',
)
p.write_text(s)
PY
python3 report.py
