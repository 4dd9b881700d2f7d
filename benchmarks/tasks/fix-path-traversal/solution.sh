#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

path = Path("fileserver.py")
text = path.read_text()
old = """    rel = unquote(url_path.split("?", 1)[0]).lstrip("/")
    path = os.path.join(root, rel)
"""
new = """    rel = unquote(url_path.split("?", 1)[0]).lstrip("/")
    base = os.path.realpath(root)
    path = os.path.realpath(os.path.join(base, rel))
    if path != base and not path.startswith(base + os.sep):
        return 403, b"forbidden"
"""
assert old in text
path.write_text(text.replace(old, new))
PY
python3 -c "import fileserver; print(fileserver.handle('/../secrets.env'), fileserver.handle('/')[0])"
