"""The functions and classes of the repository that a task names."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

WORD = re.compile(r"[A-Za-z_]\w*")  # a name, as Python spells one
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class NamedDefinition:
    """A top-level function or class that the task names, in `path`."""

    path: str
    name: str
    node: Definition


def _importable(path: str) -> bool:
    """Whether the Python file at `path` is a module Python can import (not `scripts/my-tool.py`)."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return bool(parts) and all(p.isidentifier() for p in parts)


def _definitions(text: str) -> list[Definition]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def named_definitions(task: str, sources: dict[str, str]) -> list[NamedDefinition]:
    """The top-level functions and classes of `sources` (Python files and their text, modules only)
    whose names are words of the task."""
    words = set(WORD.findall(task))
    found = []
    for path, text in sources.items():
        if _importable(path):
            found += [NamedDefinition(path, n.name, n) for n in _definitions(text) if n.name in words]
    return found


def named_as_code(task: str, name: str) -> bool:
    """Whether the task names `name` as code (`parse_duration`, Rectangle, `total()`), not as the word
    it also is ("add a flag" and a function `add`)."""
    if "_" in name or any(c.isupper() for c in name[1:]) or name[0].isupper():
        return True
    return re.search(rf"`{re.escape(name)}(?:\(\))?`|\b{re.escape(name)}\(\)", task) is not None
