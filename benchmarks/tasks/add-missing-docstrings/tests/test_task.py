"""Outcome checks for add-missing-docstrings."""

import ast
import importlib
import os
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
DATA = Path(__file__).parent / "data"
sys.dont_write_bytecode = True
FUNCTIONS = ["to_cents", "format_cents", "split_evenly", "add_tax", "total"]


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


def functions(tree):
    return {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def strip(tree):
    """The code without docstrings and annotations, to compare behaviour-relevant structure."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            first = body[0].value if body and isinstance(body[0], ast.Expr) else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                node.body = body[1:] or [ast.Pass()]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for arg in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                arg.annotation = None
    return ast.dump(tree)


def test_every_function_has_a_docstring():
    tree = ast.parse((WORKDIR / "money.py").read_text(encoding="utf-8"))
    found = functions(tree)
    for name in FUNCTIONS:
        assert name in found, f"{name} is gone"
        doc = ast.get_docstring(found[name])
        assert doc and len(doc.split()) >= 3, f"{name} has no real docstring"
        assert "todo" not in doc.lower(), f"{name}: placeholder docstring"


def test_code_unchanged():
    new = ast.parse((WORKDIR / "money.py").read_text(encoding="utf-8"))
    old = ast.parse((DATA / "money.py.orig").read_text(encoding="utf-8"))
    assert strip(new) == strip(old)


def test_behaviour_unchanged():
    money = load("money")
    assert money.to_cents("1,234.565") == 123457
    assert money.format_cents(-123456) == "-$1,234.56"
    assert money.split_evenly(100, 3) == [34, 33, 33]
    assert money.add_tax(1000, 7.5) == 1075
    assert money.total(["1.10", "2.20"]) == 330
