"""Definitions and references in one source file, found with tree-sitter tag queries."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentcli.repo.shebang import interpreter
from agentcli.repo.tagqueries import QUERIES

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".sh": "bash",
    ".bash": "bash",
}

_PYTHON = re.compile(r"python[0-9.]*")
MAX_SIGNATURE_CHARS = 200
MEMBER_CALL_WEIGHT = 0.25  # `x.read()` is seldom a call of the project's own `read`
# Continuation lines of a multi-line signature are joined into one; an inline comment would
# swallow what follows it, so it is cut off first.
_HASH_COMMENT = re.compile(r"(?:^|\s)#.*$")
_INLINE_COMMENT = {"python": _HASH_COMMENT, "bash": _HASH_COMMENT}
_C_COMMENT = re.compile(r"\s*(//.*$|/\*.*?\*/)")
_OPEN_SPACE = re.compile(r"([(\[])\s+")
_CLOSE_SPACE = re.compile(r",?\s+([)\]])")


class Definition(NamedTuple):
    """A defined name and the one line the map shows for it."""

    name: str
    kind: str  # class, function, method, constant, type, interface, enum, module, macro, impl
    line: int  # 0-based row of the signature
    signature: str  # the signature on one line, original indentation kept
    parent: int  # index of the enclosing definition in the same file, -1 at top level


@dataclass
class FileTags:
    """What one file defines and which names it uses (with how often)."""

    language: str
    lines: int
    definitions: list[Definition] = field(default_factory=list)
    references: dict[str, float] = field(default_factory=dict)  # name -> uses, weighted by kind


def language_for(path: str) -> str | None:
    """The grammar for a file name, from its extension; None when the map does not cover it."""
    dot = path.rfind(".")
    if dot <= path.rfind("/"):
        return None
    return EXTENSIONS.get(path[dot:].lower())


def language_from_shebang(head: bytes) -> str | None:
    """`python` or `bash` for a script without extension, from its `#!` line."""
    name = interpreter(head)
    if name is None:
        return None
    if _PYTHON.fullmatch(name):
        return "python"
    return "bash" if name in ("bash", "sh", "dash") else None


@functools.cache
def _tools(language: str) -> tuple[Any, Any]:
    from tree_sitter import Parser, Query
    from tree_sitter_language_pack import get_language

    grammar = get_language(language)  # type: ignore[arg-type]
    return Parser(grammar), Query(grammar, QUERIES[language])


def extract_tags(source: bytes, language: str) -> FileTags:
    """Parse `source` and collect its definitions (in source order) and references."""
    from tree_sitter import QueryCursor

    parser, query = _tools(language)
    tree = parser.parse(source)
    found: dict[int, tuple[int, int, int, str, str, Any]] = {}
    refs: dict[bytes, float] = defaultdict(float)
    imported: set[int] = set()
    for _, captures in QueryCursor(query).matches(tree.root_node):
        name_node = kind = None
        whole = None
        for capture, nodes in captures.items():
            if capture.startswith("name.reference."):
                weight = MEMBER_CALL_WEIGHT if capture == "name.reference.method" else 1.0
                for node in nodes:
                    refs[node.text] += weight
                if capture == "name.reference.import":
                    imported.update(node.start_byte for node in nodes)
            elif capture.startswith("name.definition."):
                name_node, kind = nodes[0], capture[16:]
            elif capture.startswith("definition."):
                whole = nodes[0]
        if name_node is None or whole is None or kind is None:
            continue
        key = name_node.start_byte
        # One name can match two patterns (a JS arrow function is also a top-level const).
        if key in found and (kind == "constant" or found[key][4] != "constant"):
            continue
        name = name_node.text.decode("utf-8", "replace")
        found[key] = (whole.start_byte, -whole.end_byte, name_node.start_point[0], name, kind, whole)

    for key in imported.intersection(found):
        if found[key][4] == "constant":
            del found[key]
    definitions: list[Definition] = []
    open_scopes: list[tuple[int, int]] = []  # (end byte, index) of definitions still enclosing
    for start, neg_end, name_row, name, kind, whole in sorted(found.values(), key=lambda f: (f[0], f[1])):
        while open_scopes and open_scopes[-1][0] <= start:
            open_scopes.pop()
        parent = open_scopes[-1][1] if open_scopes else -1
        row, text = _signature(source, whole, name_row, language)
        definitions.append(Definition(name, kind, row, text, parent))
        open_scopes.append((-neg_end, len(definitions) - 1))
    references = {name.decode("utf-8", "replace"): count for name, count in refs.items()}
    return FileTags(language, source.count(b"\n") + 1, definitions, references)


def _signature(source: bytes, whole: Any, name_row: int, language: str) -> tuple[int, str]:
    """The definition's head, from the start of its line up to its body, as one line."""
    start = source.rfind(b"\n", 0, whole.start_byte) + 1
    row = whole.start_point[0]
    # Annotations and decorators above the name are not part of the signature.
    while row < name_row and source[start : start + 64].lstrip().startswith(b"@"):
        start = source.index(b"\n", start) + 1
        row += 1
    body = whole.child_by_field_name("body")
    end = body.start_byte if body is not None and body.start_byte > start else source.find(b"\n", start)
    if end < 0:
        end = len(source)
    lines = source[start:end].decode("utf-8", "replace").rstrip().split("\n")
    if len(lines) > 1:
        cut = _INLINE_COMMENT.get(language, _C_COMMENT)
        text = cut.sub("", lines[0]).rstrip()
        rest = " ".join(stripped for line in lines[1:] if (stripped := cut.sub("", line).strip()))
        if rest:
            text = _CLOSE_SPACE.sub(r"\1", _OPEN_SPACE.sub(r"\1", f"{text} {rest}"))
    else:
        text = lines[0]
    if len(text) > MAX_SIGNATURE_CHARS:
        text = text[: MAX_SIGNATURE_CHARS - 1] + "…"
    return row, text.replace("\t", "    ")
