#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

path = Path("filestats.py")
text = path.read_text()
text = text.replace(
    'subprocess.run(f"wc -l < {path}", shell=True, capture_output=True, text=True, check=True).stdout',
    'subprocess.run(["wc", "-l"], stdin=open(path, "rb"), capture_output=True, text=True, check=True).stdout',
)
text = text.replace(
    'subprocess.run(f"sha256sum {path}", shell=True, capture_output=True, text=True, check=True).stdout',
    'subprocess.run(["sha256sum", "--", path], capture_output=True, text=True, check=True).stdout',
)
assert "shell=True" not in text
path.write_text(text)
PY
printf 'a\nb\n' > "/tmp/it's a test.txt"
python3 filestats.py "/tmp/it's a test.txt"
rm -f "/tmp/it's a test.txt"
