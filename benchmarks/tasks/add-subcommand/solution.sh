#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

p = Path("todo.py")
s = p.read_text()
s = s.replace(
    "def build_parser()",
    '''def cmd_done(args: argparse.Namespace) -> int:
    todos = load(args.file)
    for todo in todos:
        if todo["id"] == args.id:
            todo["done"] = True
            save(args.file, todos)
            print(f"done {args.id}")
            return 0
    print(f"no todo with id {args.id}", file=sys.stderr)
    return 1


def build_parser()''',
)
s = s.replace(
    "    return parser\n",
    '''    done = commands.add_parser("done", help="mark a todo as done")
    done.add_argument("id", type=int)
    done.set_defaults(func=cmd_done)
    return parser
''',
)
p.write_text(s)
PY
python3 todo.py done --help
