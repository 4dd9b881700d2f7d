#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("greet.py")
s = p.read_text()
s = s.replace(
    "    return parser\n",
    '    parser.add_argument("--shout", action="store_true", help="print the greeting in upper case")\n'
    "    return parser\n",
)
s = s.replace(
    "    print(message)\n",
    "    if args.shout:\n        message = message.upper()\n    print(message)\n",
)
p.write_text(s)
PY
python3 greet.py Ada --shout
