"""Processes' lives: one that dies with its parent (Linux's parent-death signal, set from Python), and
whether one still runs.

Linux sends the signal when the *thread* that started the process ends, so callers start such
processes from threads that outlive them.
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_PDEATHSIG = 1


def set_parent_death_signal(signum: int) -> bool:
    """Ask for `signum` when the parent dies; False where it cannot be set (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs on this host (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
