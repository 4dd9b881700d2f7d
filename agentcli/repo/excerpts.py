"""The files shown to the model in full before its first command.

In a small repository the code the task is about fits in a few hundred tokens. Showing it at the
start spares a small model the turns it would spend on `cat` (and the misreadings of partial
views), and lets its first reply already be a fix. Files the task names come first, then files
named like its words, then the rest of the code, smallest first; a file the task names that is too
big to show whole (a log, a data file) is shown by its first lines, so its shape is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.models.base import estimate_tokens
from agentcli.prompts import render
from agentcli.repo.ranking import mentioned_files, mentioned_identifiers, stem_matches

# Beyond this size a file is never read whole for the overview.
MAX_FILE_BYTES = 64 * 1024
# A file the task names but that is too big is shown by its head: enough lines to show its shape.
MIN_HEAD_LINES, MAX_HEAD_LINES = 8, 20
# Code and the text files that configure or document it; data and logs only when the task names them.
CODE_SUFFIXES = frozenset(
    {".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".rb", ".java", ".c", ".h"}
    | {".cc", ".cpp", ".hpp", ".php", ".pl", ".lua", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".md"}
    | {".txt", ".mk"}
)
CODE_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", ".gitignore"})

# How a file's text is fenced, by suffix: the same form the model writes a file in.
_FENCE_LANGUAGE = {".py": "python", ".sh": "bash", ".bash": "bash", ".js": "javascript", ".ts": "typescript"}


@dataclass(frozen=True)
class Excerpt:
    path: str
    text: str
    lines: int  # of the whole file
    shown: int  # lines shown: all of them, or the head

    def render(self) -> str:
        return render(
            "first_look/excerpt",
            path=self.path,
            shown=self.shown,
            lines=self.lines,
            fence="````" if "```" in self.text else "```",
            language=_FENCE_LANGUAGE.get(Path(self.path).suffix, ""),
            text=self.text.rstrip("\n"),
        )


def read_text(root: Path, relative: str) -> str | None:
    """The file's text, or None for what is not a small UTF-8 text file (or is a link)."""
    try:
        data = untrusted.read_bytes(root, relative, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data[:MAX_FILE_BYTES].decode("utf-8")
    except UnicodeDecodeError:
        return None


def line_count(root: Path, relative: str) -> int:
    """Lines in the file, counted without holding it in memory."""
    count, last = 0, b"\n"
    with untrusted.open_file(root, relative) as f:
        while chunk := f.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def is_code(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in CODE_NAMES or Path(name).suffix in CODE_SUFFIXES


def candidate_order(files: list[str], task: str) -> tuple[list[str], set[str]]:
    """Files in the order they are worth showing, and the set of those the task names."""
    named = mentioned_files(task, files)
    related = stem_matches(mentioned_identifiers(task), files) - named
    ordered = sorted(named) + sorted(related)
    return ordered, named


def select_excerpts(
    root: Path,
    files: list[str],
    task: str,
    token_budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> list[Excerpt]:
    """The excerpts that fit `token_budget`: whole files where they fit, heads of the files the task names."""
    if token_budget <= 0:
        return []
    first, named = candidate_order(files, task)
    texts: dict[str, str] = {}
    for rel in files:
        if rel in first or is_code(rel):
            text = read_text(root, rel)
            if text is not None and text.strip():
                texts[rel] = text
    rest = sorted((p for p in texts if p not in first), key=lambda p: (len(texts[p]), p))
    chosen: list[Excerpt] = []
    left = token_budget
    for rel in [p for p in first if p in texts] + rest:
        text = texts[rel]
        lines = text.splitlines()
        whole = Excerpt(rel, text, len(lines), len(lines))
        cost = count_tokens(whole.render())
        if cost <= left and len(text) < MAX_FILE_BYTES:
            chosen.append(whole)
            left -= cost
        elif rel in named:
            head = _head_within(rel, lines, line_count(root, rel), left, count_tokens)
            if head is not None:
                chosen.append(head)
                left -= count_tokens(head.render())
    return chosen


def _head_within(
    rel: str, lines: list[str], total: int, tokens: int, count_tokens: Callable[[str], int]
) -> Excerpt | None:
    """The longest head of the file, of at least MIN_HEAD_LINES lines, that fits `tokens`."""
    best = None
    low, high = MIN_HEAD_LINES, min(len(lines), MAX_HEAD_LINES)
    while low <= high:
        middle = (low + high) // 2
        excerpt = Excerpt(rel, "\n".join(line[:300] for line in lines[:middle]), total, middle)
        if count_tokens(excerpt.render()) <= tokens:
            best, low = excerpt, middle + 1
        else:
            high = middle - 1
    return best
