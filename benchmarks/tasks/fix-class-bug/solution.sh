#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("inventory.py")
s = p.read_text()
s = s.replace("stock: dict[str, int] = {}) -> None:", "stock: dict[str, int] | None = None) -> None:")
s = s.replace("        self._stock = stock\n", "        self._stock = dict(stock) if stock else {}\n")
p.write_text(s)
PY
python3 -m pytest -q test_inventory.py
