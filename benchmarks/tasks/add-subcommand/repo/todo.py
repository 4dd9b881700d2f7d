"""A tiny todo list kept in a JSON file.

    python3 todo.py add "buy milk"
    python3 todo.py list
    python3 todo.py --file other.json list
"""

import argparse
import json
import os
import sys


def load(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def save(path: str, todos: list[dict]) -> None:
    with open(path, "w") as f:
        json.dump(todos, f, indent=2)
        f.write("\n")


def cmd_add(args: argparse.Namespace) -> int:
    todos = load(args.file)
    next_id = max((t["id"] for t in todos), default=0) + 1
    todos.append({"id": next_id, "text": args.text, "done": False})
    save(args.file, todos)
    print(f"added {next_id}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for todo in load(args.file):
        mark = "x" if todo["done"] else " "
        print(f"[{mark}] {todo['id']} {todo['text']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo.py")
    parser.add_argument("--file", default="todos.json", help="where the todos are kept")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a todo")
    add.add_argument("text")
    add.set_defaults(func=cmd_add)
    commands.add_parser("list", help="show all todos").set_defaults(func=cmd_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
