"""Rank files and their definitions by a reference graph, biased towards what the task names.

File A referring to a name that file B defines is an edge A -> B; PageRank over those edges says
which files the rest of the code leans on. Each file's rank then flows along its out-edges to the
definitions it uses, which ranks the definitions themselves.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import mul

from agentcli.repo.stopnames import stop_names
from agentcli.repo.tags import FileTags

MAX_DEFINERS = 40  # a name defined in more files than this (`get`, `run`) says nothing about any of them
MENTIONED_IDENT_BOOST = 10.0
PRIVATE_FACTOR = 0.1
NESTED_FACTOR = 0.5
# `impl Foo`, `mod x`, `namespace y` are shown as the context of what they contain, seldom alone.
CONTAINER_KINDS = frozenset({"impl", "module"})
CONTAINER_FACTOR = 0.1
BASE_SHARE = 0.01  # what an unreferenced definition gets, as a share of its file's rank
MENTIONED_FILE_BONUS = 1.0  # ranks sum to 1, so this puts definitions of named files first
MENTIONED_NAME_BONUS = 0.5  # then definitions the task names, if the name is rare enough to mean them
MAX_NAMED_DEFINERS = 3
FOCUS_SHARE = 0.9  # of the random-jump weight that goes to files the task names

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHISH = re.compile(r"[\w.\-/]+")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
_CODE_SHAPE = re.compile(r"[a-z0-9]_[A-Za-z0-9]|[a-z][A-Z]")


@dataclass
class Ranking:
    """Files with their rank, and definitions as (score, file, index), best first."""

    file_ranks: dict[str, float] = field(default_factory=dict)
    definitions: list[tuple[float, str, int]] = field(default_factory=list)

    def files(self) -> list[str]:
        """Files in the order their best definition appears in the ranking."""
        seen: dict[str, None] = {}
        for _, path, _ in self.definitions:
            seen.setdefault(path, None)
        rest = sorted((p for p in self.file_ranks if p not in seen), key=lambda p: -self.file_ranks[p])
        return [*seen, *rest]


def mentioned_identifiers(text: str) -> set[str]:
    """Identifier-like words of the task text (three characters or more)."""
    return {w for w in _WORD.findall(text) if len(w) >= 3}


def code_identifiers(text: str) -> set[str]:
    """Names the text writes as code: in backticks, called, snake_case, or camelCase."""
    found = {w for quoted in _BACKTICKED.findall(text) for w in _WORD.findall(quoted)}
    found.update(_CALLED.findall(text))
    found.update(w for w in _WORD.findall(text) if _CODE_SHAPE.search(w))
    return found


def mentioned_files(text: str, paths: Iterable[str], *, max_same_name: int = 3) -> set[str]:
    """Files the text names: by full relative path, by a path suffix, or by a rare enough base name."""
    paths = list(paths)
    known = set(paths)
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        by_name[p.rsplit("/", 1)[-1]].append(p)
    found: set[str] = set()
    for raw in _PATHISH.findall(text):
        token = raw.rstrip(".-/")  # a path can end a sentence
        while token.startswith("./"):
            token = token[2:]
        if "." not in token and "/" not in token:
            continue
        if token in known:
            found.add(token)
        elif "/" in token:
            found.update(p for p in paths if p.endswith("/" + token))
        elif 0 < len(by_name.get(token, ())) <= max_same_name:
            found.update(by_name[token])
    return found


def stem_matches(idents: set[str], paths: Iterable[str]) -> set[str]:
    """Files whose stem is a word of the task (`repomap` -> `agentcli/repo/repomap.py`)."""
    out = set()
    for p in paths:
        stem = p.rsplit("/", 1)[-1].split(".", 1)[0]
        if len(stem) >= 4 and stem in idents:
            out.add(p)
    return out


def pagerank(
    out_edges: Sequence[Mapping[int, float]],
    personalization: Sequence[float] | None = None,
    *,
    damping: float = 0.85,
    tolerance: float = 1e-4,
    max_iterations: int = 100,
) -> list[float]:
    """Power iteration over a weighted graph, `out_edges[src] = {dst: weight}`; the result sums to 1.

    Random jumps, and the rank of nodes without out-edges, go by `personalization` (uniform if None).
    Stops when an iteration moves the ranks by less than `tolerance` in total (L1).
    """
    n = len(out_edges)
    if n == 0:
        return []
    total = sum(personalization) if personalization is not None else 0.0
    jump = [w / total for w in personalization] if personalization is not None and total > 0 else [1.0 / n] * n
    # Pull form: each node sums its in-edges, so the inner loop runs in C (sum over map).
    sources: list[list[int]] = [[] for _ in range(n)]
    weights: list[list[float]] = [[] for _ in range(n)]
    dangling: list[int] = []
    for src, targets in enumerate(out_edges):
        out = sum(w for w in targets.values() if w > 0)
        if out <= 0:
            dangling.append(src)
            continue
        for dst, w in targets.items():
            if w > 0:
                sources[dst].append(src)
                weights[dst].append(w / out)
    # Gauss-Seidel sweeps (each node reads the ranks already updated in this sweep) converge in
    # about half the iterations of plain power iteration, to the same fixed point once normalised.
    rank = list(jump)
    get = rank.__getitem__
    nodes = [(i, sources[i], weights[i], jump[i]) for i in range(n)]
    for _ in range(max_iterations):
        teleport = 1.0 - damping + damping * sum(map(get, dangling))
        delta = 0.0
        for i, src, wts, j in nodes:
            value = damping * sum(map(mul, wts, map(get, src))) + teleport * j if src else teleport * j
            delta += abs(value - rank[i])
            rank[i] = value
        total = sum(rank)
        if total > 0:
            rank[:] = [r / total for r in rank]
        if delta < tolerance:
            break
    return rank


def rank_tags(
    tags: Mapping[str, FileTags],
    *,
    focus_files: set[str] | frozenset[str] = frozenset(),
    focus_idents: set[str] | frozenset[str] = frozenset(),
    code_idents: set[str] | frozenset[str] = frozenset(),
    related_files: set[str] | frozenset[str] = frozenset(),
    focus_limit: int | None = None,
    limit: int | None = None,
) -> Ranking:
    """Rank files and definitions by the reference graph, biased by the task text.

    `focus_files` (named by the task) come first; `code_idents` (names it writes as code) next;
    `focus_idents` (every word of it) weigh more; `related_files` get half a focus file's share of
    the random jumps. `focus_limit` caps how many definitions of focus files are put first.
    `limit` keeps only that many of the best definitions.
    """
    files = sorted(tags)
    n = len(files)
    defines: dict[str, list[int]] = defaultdict(list)
    own_names: list[set[str]] = []
    for i, path in enumerate(files):
        own = {d.name for d in tags[path].definitions}
        own_names.append(own)
        for name in own:
            if not (name.startswith("__") and name.endswith("__")):
                defines[name].append(i)

    # Edge weights: per name, sqrt(uses) shared among the files that define it.
    out_edges: list[dict[int, float]] = [defaultdict(float) for _ in range(n)]
    uses: list[dict[str, float]] = [{} for _ in range(n)]
    sqrt = math.sqrt
    for i, path in enumerate(files):
        common = stop_names(tags[path].language)
        row, used, own = out_edges[i], uses[i], own_names[i]
        for name, count in tags[path].references.items():
            definers = defines.get(name)
            # A name the file defines itself refers to that definition, not to another file's.
            if definers is None or len(definers) > MAX_DEFINERS or name in own or len(name) < 2:
                continue
            if name in common:
                continue
            weight = sqrt(count) / len(definers)
            if name in focus_idents:
                weight *= MENTIONED_IDENT_BOOST
            if name[0] == "_":
                weight *= PRIVATE_FACTOR
            used[name] = weight
            for d in definers:
                row[d] += weight

    # A name the task writes as code, that few files define, points at those definitions and files.
    named = {name for name in code_idents if 0 < len(defines.get(name, ())) <= MAX_NAMED_DEFINERS}
    related_files = set(related_files).union(files[i] for name in named for i in defines[name])
    personal = None
    if focus_files or related_files:
        wanted = [1.0 if p in focus_files else 0.5 if p in related_files else 0.0 for p in files]
        total = sum(wanted)
        personal = [FOCUS_SHARE * w / total + (1 - FOCUS_SHARE) / n for w in wanted]
    ranks = pagerank(out_edges, personal)

    # Each file hands its rank to the names it uses, in proportion to the edge weights; every
    # definer of a name gets the same share.
    share = [0.0] * n
    flowing: dict[str, float] = defaultdict(float)
    for i in range(n):
        out = sum(out_edges[i].values())
        if out > 0:
            share[i] = ranks[i] / out
            for name, weight in uses[i].items():
                flowing[name] += share[i] * weight

    scored: list[tuple[float, int, int]] = []  # (-score, file index, definition index)
    lifted: list[int] = []  # positions in `scored` of definitions in files the task names
    for i, path in enumerate(files):
        focused = path in focus_files
        base = BASE_SHARE * ranks[i]
        definitions = tags[path].definitions
        for j, (name, kind, _, _, parent) in enumerate(definitions):
            score = base + flowing.get(name, 0.0)
            if parent >= 0:
                # A constructor (named as its class) shares the class's references; the class says it.
                score *= CONTAINER_FACTOR if definitions[parent].name == name else NESTED_FACTOR
            if kind in CONTAINER_KINDS:
                score *= CONTAINER_FACTOR
            if name in focus_idents:
                score *= MENTIONED_IDENT_BOOST
            if name in named:
                score += MENTIONED_NAME_BONUS
            if name[0] == "_":
                score *= PRIVATE_FACTOR
            if focused:
                lifted.append(len(scored))
            scored.append((-score, i, j))
    # The best definitions of the named files go first, but only `focus_limit` of them, so that a
    # long file the task names leaves room for what it uses.
    lifted.sort(key=scored.__getitem__)
    for k in lifted[:focus_limit]:
        score, i, j = scored[k]
        scored[k] = (score - MENTIONED_FILE_BONUS, i, j)
    # Ties (common in small repositories) fall back to path and source order, for stable maps.
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    return Ranking(dict(zip(files, ranks, strict=True)), [(-s, files[i], j) for s, i, j in best])
