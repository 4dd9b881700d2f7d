"""The package layout holds: no import cycle between agentcli's packages."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "agentcli"


def _imports_between_packages() -> dict[str, set[str]]:
    """For each subpackage of agentcli, the other subpackages its modules import (lazily or not)."""
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    edges: dict[str, set[str]] = {name: set() for name in packages}
    for name in packages:
        for path in (PACKAGE / name).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agentcli."):
                    target = node.module.split(".")[1]
                    if target in packages and target != name:
                        edges[name].add(target)
    return edges


def test_no_cycle_between_packages():
    edges = _imports_between_packages()

    def path(start: str, goal: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in sorted(edges[start]):
            if nxt == goal:
                return (*seen, nxt)
            if nxt not in seen and (found := path(nxt, goal, (*seen, nxt))):
                return found
        return None

    cycles = [found for name in sorted(edges) if (found := path(name, name, (name,)))]
    assert not cycles, f"import cycles: {cycles}"
