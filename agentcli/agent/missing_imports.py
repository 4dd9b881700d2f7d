"""Standard-library modules that a change to Python code uses and never imports (`os.getenv(...)` in a file
with no `import os`), and the code with their imports added beside the file's own.

A small model that changes one line to use a module forgets the import, and then reads
`NameError: name 'os' is not defined` without seeing that the fix is one line at the top: it rewrites
the line it changed again and again. Nothing here reads the task; only names nothing in the file binds.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from typing import NamedTuple

from agentcli.agent.pysource import parse
from agentcli.prompts import render

# Standard-library modules, less private ones (`_thread`), names the builtins take first, and modules
# whose import does something (prints, opens a browser).
_STDLIB = frozenset(
    name for name in sys.stdlib_module_names if not name.startswith("_") and name not in {"this", "antigravity"}
) - set(dir(builtins))
# Lines at a file's top that must stay first: `#!` and an encoding cookie (Python reads it on line 1 or 2).
_LEADING_COMMENT = re.compile(r"#!|#.*coding[:=]")


class Completed(NamedTuple):
    """A file's text with the imports it lacked, and the note that tells the model so."""

    text: str
    note: str


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
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            used.add(node.value.id)
    return sorted(name for name in used - bound if name in _STDLIB)


def with_imports(text: str, modules: list[str]) -> str | None:
    """`text` with `import M` for each of `modules` after the imports that open it (before them where
    code shares their last line; else after its docstring, else below a `#!` line and an encoding
    cookie); None where the result would not compile or would still lack one of them."""
    tree = parse(text)
    if tree is None or not modules:
        return None
    # Python numbers lines at \n alone (a \r\n ends in \n); str.splitlines also splits at \f and others.
    lines = text.split("\n")
    at = 0
    body = list(tree.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        at = body.pop(0).end_lineno or 0
    # The first run of imports: one further down may come after code that already needs the module.
    before_imports = at
    for node in body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            if node.lineno <= at:  # `import re; x = os.sep`: the code shares the imports' last line
                at = before_imports
            break
        at = node.end_lineno or at
    if at == 0:
        while at < min(2, len(lines)) and _LEADING_COMMENT.match(lines[at]):
            at += 1
    end = "\r" if text.count("\r\n") > text.count("\n") // 2 else ""
    added = [f"import {module}{end}" for module in modules]
    if at == len(lines):  # the imports end the file, with no newline after them
        lines[-1] += end
        lines.append("")
    new = "\n".join(lines[:at] + added + lines[at:])
    return new if _compiles(new) and not set(modules) & set(missing_modules(new)) else None


def _compiles(text: str) -> bool:
    """Whether Python compiles `text`: more than a parse, it puts `from __future__` imports first."""
    try:
        compile(text, "<changed file>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def completed_imports(path: str, text: str, before: str | None) -> Completed | None:
    """A Python file's text with the standard-library imports its change (from `before`; None: a new file)
    left missing, and the note that says so; None where it lacks none (or is no Python file, or they
    cannot be added). A module already missing before the change is the file's own business."""
    if not path.endswith(".py") or "\ufffd" in text:  # text read with undecodable bytes is not written back
        return None
    earlier = set(missing_modules(before)) if before is not None else set()
    modules = [module for module in missing_modules(text) if module not in earlier]
    if not modules or (new := with_imports(text, modules)) is None:
        return None
    return Completed(new, render("notes/imports_added", path=path, modules=modules))
