"""Standard-library modules that Python code uses and never imports (`os.getenv(...)` in a file with no
`import os`), and the code with their imports added beside the file's own.

A small model that changes one line to use a module forgets the import, and then reads
`NameError: name 'os' is not defined` without seeing that the fix is one line at the top: it rewrites
the line it changed again and again. Nothing here reads the task; only names nothing in the file binds.
"""

from __future__ import annotations

import ast
import builtins
import sys

from agentcli.agent.pysource import parse
from agentcli.prompts import render

# Standard-library modules, less private ones (`_thread`) and names the builtins take first.
_STDLIB = frozenset(name for name in sys.stdlib_module_names if not name.startswith("_")) - set(dir(builtins))


def missing_modules(text: str) -> list[str]:
    """The standard-library modules `text` uses as `module.name` and nothing in it binds, sorted; none
    where it does not parse or imports with `*` (which may bind anything)."""
    tree = parse(text)
    if tree is None:
        return []
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return []
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            used.add(node.value.id)
    return sorted(name for name in used - bound if name in _STDLIB)


def with_imports(text: str, modules: list[str]) -> str | None:
    """`text` with `import M` for each of `modules` after its last top-level import (else after its
    docstring, else at its top, below a `#!` line); None where the result would not parse."""
    tree = parse(text)
    if tree is None or not modules:
        return None
    lines = text.splitlines(keepends=True)
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    if imports:
        at = imports[-1].end_lineno or 0
    elif tree.body and isinstance(doc := tree.body[0], ast.Expr) and isinstance(doc.value, ast.Constant):
        at = doc.end_lineno or 0
    else:
        at = 1 if lines and lines[0].startswith("#!") else 0
    if at and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    added = "".join(f"import {module}\n" for module in modules)
    new = "".join(lines[:at]) + added + "".join(lines[at:])
    return new if parse(new) is not None else None


def completed_imports(path: str, text: str) -> tuple[str, str] | None:
    """A Python file's text with the standard-library imports it lacks, and the note that says so; None
    where it lacks none (or is no Python file, or they cannot be added)."""
    if not path.endswith(".py") or not (modules := missing_modules(text)):
        return None
    if (new := with_imports(text, modules)) is None:
        return None
    return new, render("notes/imports_added", path=path, modules=modules)
