"""The repository map: the code's most relevant definitions, one signature line each, within a token budget.

    build_repo_map(root, token_budget=1024, mentioned=task_text) -> str

Files come from `git ls-files` (so `.gitignore` is honoured) or a walk that skips hidden
directories, `node_modules` and virtual environments. Tags are cached on disk per repository,
so a second run parses only the files that changed. The rendered map lists files, most relevant
first, each followed by the signature lines of its best-ranked definitions:

    agentcli/agent/parsing.py:
    │class Parser:
    │    def parse(self, text: str) -> Action:
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.errors import UsageError
from agentcli.models.base import estimate_tokens
from agentcli.repo.git import Git, GitError
from agentcli.repo.mapcache import TagCache, cache_path
from agentcli.repo.ranking import (
    Ranking,
    code_identifiers,
    mentioned_files,
    mentioned_identifiers,
    rank_tags,
    stem_matches,
)
from agentcli.repo.shebang import HEAD_BYTES
from agentcli.repo.tags import FileTags, extract_tags, language_for, language_from_shebang

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1 << 20
BINARY_PROBE = 8192
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "bower_components"})
LINE_MARK = "│"
# Files the task names get about half the budget first: a signature line costs ~12 tokens.
FOCUS_TOKENS_PER_DEFINITION = 24


@dataclass
class MapStats:
    """What one run did: how many source files it saw, parsed anew, took from the cache or skipped."""

    files: int = 0
    parsed: int = 0
    cached: int = 0
    skipped: int = 0
    lines_parsed: int = 0
    definitions: int = 0
    seconds: float = 0.0  # collecting the tags; with `build_repo_map`, the whole map


def list_files(root: Path) -> list[str]:
    """Relative paths of the files under `root`: git's view when it is a repository, else a walk."""
    try:
        listing = Git(root)("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    except (OSError, GitError) as e:
        log.debug("git ls-files unavailable in %s: %s", root, e)
    else:
        return sorted({n for n in listing.split("\0") if n and not SKIP_DIRS.intersection(n.split("/")[:-1])})
    return _walk(root)


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    base = os.path.join(str(root), "")
    for folder, dirs, files in os.walk(base):
        if "pyvenv.cfg" in files and folder != base:  # a virtual environment
            dirs.clear()
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS]
        prefix = os.path.join(folder[len(base) :], "") if folder != base else ""
        found.extend(prefix + f for f in files if not f.startswith("."))
    return sorted(found)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes kept as surrogates
        return False
    return True


def _looks_minified(rel: str, data: bytes) -> bool:
    """Bundled or minified code: a `.min.` name, or lines averaging over 300 characters."""
    return ".min." in rel or (len(data) > 1000 and len(data) > 300 * (data.count(b"\n") + 1))


def collect_tags(
    root: Path,
    *,
    cache: bool = True,
    max_file_bytes: int = MAX_FILE_BYTES,
    stats: MapStats | None = None,
) -> dict[str, FileTags]:
    """Tags of every source file under `root`, parsing only what the cache does not hold."""
    stats = stats if stats is not None else MapStats()
    started = time.perf_counter()
    store = TagCache(cache_path(root) if cache else None, root.resolve())
    result: dict[str, FileTags] = {}
    base = str(root)
    for rel in list_files(root):
        if not rel.isprintable() or not _utf8(rel):
            continue  # a name the cache (JSON) and the model's text could not hold
        language = language_for(rel)
        name = rel.rsplit("/", 1)[-1]
        if language is None and "." in name.lstrip("."):
            continue  # an extension the map does not cover
        try:
            st = os.stat(os.path.join(base, rel), follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        hit = store.get(rel, st.st_mtime_ns, st.st_size)
        if hit is not None:
            if isinstance(hit, FileTags):
                result[rel] = hit
                stats.files += 1
                stats.cached += 1
            elif language is not None:
                stats.files += 1
                stats.skipped += 1
            continue
        tags = _parse_file(Path(base), rel, language, st.st_size, max_file_bytes)
        store.put(rel, st.st_mtime_ns, st.st_size, tags)
        if tags is None:
            if language is not None:
                stats.files += 1
                stats.skipped += 1
            continue
        result[rel] = tags
        stats.files += 1
        stats.parsed += 1
        stats.lines_parsed += tags.lines
    store.save()
    stats.definitions = sum(len(t.definitions) for t in result.values())
    stats.seconds = time.perf_counter() - started
    return result


def _parse_file(base: Path, rel: str, language: str | None, size: int, max_bytes: int) -> FileTags | None:
    """The file's tags, or None when it is too big, binary, minified, not code, or unparsable."""
    if size > max_bytes:
        log.debug("repository map skips %s: %d bytes", rel, size)
        return None
    try:
        with untrusted.open_file(base, rel) as f:  # a link the sandbox planted is not followed
            if language is None:  # no extension: a script only if its `#!` line says so
                language = language_from_shebang(f.read(HEAD_BYTES))
                if language is None:
                    return None
                f.seek(0)
            data = f.read()
    except OSError as e:
        log.debug("repository map cannot read %s: %s", rel, e)
        return None
    if b"\0" in data[:BINARY_PROBE]:
        log.debug("repository map skips binary %s", rel)
        return None
    if _looks_minified(rel, data):
        log.debug("repository map skips minified %s", rel)
        return None
    try:
        return extract_tags(data, language)
    except Exception as e:  # a grammar's failure on one file must not cost the whole map
        log.debug("repository map could not parse %s: %s", rel, e)
        return None


def render_map(
    tags: Mapping[str, FileTags],
    ranking: Ranking,
    count: int,
    *,
    leading_files: list[str] | None = None,
) -> str:
    """The map of the `count` best definitions (and their enclosing ones), files in ranking order."""
    chosen: dict[str, set[int]] = {path: set() for path in leading_files or ()}
    for _, path, index in ranking.definitions[:count]:
        picked = chosen.setdefault(path, set())
        definitions = tags[path].definitions
        while index >= 0 and index not in picked:
            picked.add(index)
            index = definitions[index].parent
    out: list[str] = []
    for path, indexes in chosen.items():
        out.append(f"{path}:")
        definitions = tags[path].definitions
        shown_rows: set[int] = set()
        for index in sorted(indexes, key=lambda i: (definitions[i].line, i)):
            d = definitions[index]
            if d.line not in shown_rows:
                shown_rows.add(d.line)
                out.append(LINE_MARK + d.signature)
    return "\n".join(out) + "\n" if out else ""


def fit_map(
    tags: Mapping[str, FileTags],
    ranking: Ranking,
    token_budget: int,
    count_tokens: Callable[[str], int],
    *,
    leading_files: list[str] | None = None,
) -> str:
    """The largest map of top-ranked definitions whose token count is within the budget."""
    if token_budget <= 0:
        return ""
    best = ""
    # Every definition adds at least one line, so more than `token_budget` of them never fit.
    lo, hi = 0, min(len(ranking.definitions), token_budget)
    while lo <= hi:
        mid = (lo + hi) // 2
        text = render_map(tags, ranking, mid, leading_files=leading_files)
        if count_tokens(text) <= token_budget:
            best = text
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def build_repo_map(
    root: Path,
    *,
    token_budget: int = 1024,
    mentioned: str = "",
    count_tokens: Callable[[str], int] | None = None,
    cache: bool = True,
    max_file_bytes: int = MAX_FILE_BYTES,
    stats: MapStats | None = None,
) -> str:
    """The ranked map of the code under `root`, at most `token_budget` tokens; "" if nothing fits.

    `mentioned` is the task text: files it names come first, and identifiers it names rank higher.
    """
    if token_budget <= 0:
        return ""
    started = time.perf_counter()
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"not a directory: {root}")
    stats = stats if stats is not None else MapStats()
    tags = collect_tags(root, cache=cache, max_file_bytes=max_file_bytes, stats=stats)
    if not tags:
        return ""
    focus_files = mentioned_files(mentioned, tags) if mentioned else set()
    idents = mentioned_identifiers(mentioned) if mentioned else set()
    related = stem_matches(idents, tags) - focus_files if idents else set()
    ranking = rank_tags(
        tags,
        focus_files=focus_files,
        focus_idents=idents,
        code_idents=code_identifiers(mentioned) if mentioned else set(),
        related_files=related,
        focus_limit=max(8, token_budget // FOCUS_TOKENS_PER_DEFINITION),
        limit=token_budget,
    )
    leading = sorted(focus_files, key=lambda p: -ranking.file_ranks.get(p, 0.0))
    text = fit_map(tags, ranking, token_budget, count_tokens or estimate_tokens, leading_files=leading)
    stats.seconds = time.perf_counter() - started
    return text
