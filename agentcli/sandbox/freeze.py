"""Stopping every process of a sandbox for a while: agentcli's own git writes on the host (an attempt's
state set aside, the repository put back between attempts) must not race a process the model left
running, which could plant a link where git is about to write (`.git/logs/HEAD` pointing at a host file).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path


def descendants(root: int) -> set[int]:
    """The processes below `root` (not `root` itself), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command name, in parentheses, may hold spaces: the fields after its last ")" are plain.
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@contextlib.contextmanager
def stopped_tree(root: int | None) -> Iterator[None]:
    """Every process below `root` stopped (SIGSTOP) for the block, continued after it. It lists and
    stops them until a listing finds none new: a stopped process forks no more (one that ended
    meanwhile is not listed again; a zombie takes the signal)."""
    stopped: list[int] = []
    try:
        while root is not None and (new := descendants(root) - set(stopped)):
            for pid in new:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
        yield
    finally:
        for pid in reversed(stopped):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
