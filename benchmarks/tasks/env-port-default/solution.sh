#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("server.py")
s = p.read_text()
s = s.replace("from http.server", "import os\nfrom http.server", 1)
s = s.replace("    return (HOST, PORT)", '    return (HOST, int(os.environ.get("PORT", PORT)))')
p.write_text(s)
PY
PORT=9000 python3 -c 'import server; print(server.get_address())'
