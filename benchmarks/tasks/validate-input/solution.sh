#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("geometry.py")
s = p.read_text()
s = s.replace(
    "        self.width = width\n",
    "        for name, value in ((\"width\", width), (\"height\", height)):\n"
    "            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:\n"
    "                raise ValueError(f\"{name} must be a positive number, not {value!r}\")\n"
    "        self.width = width\n",
)
p.write_text(s)
PY
python3 -m pytest -q test_geometry.py
