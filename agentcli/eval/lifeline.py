"""`python -m agentcli.eval.lifeline PID ARGV...`: run ARGV, sent SIGTERM when process PID dies.

The eval starts its children through this on Linux, so a child whose eval (or Ray worker) is killed
outright does not run on unsupervised: an agentcli run then unwinds and closes its sandbox, a test
run stops. The signal is armed before the exec and survives it; if PID is already gone, nothing runs.
Linux sends it when the *thread* that started the child ends (see `agentcli.lifeline`), so children
are started from threads that outlive them (the eval's worker threads, a Ray worker's main thread).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from agentcli.lifeline import set_parent_death_signal


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: python -m agentcli.eval.lifeline PARENT_PID COMMAND [ARG...]", file=sys.stderr)
        return 2
    parent = int(argv[0])
    if not set_parent_death_signal(signal.SIGTERM):
        print(f"lifeline: prctl failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 1
    if os.getppid() != parent:  # the parent died before the signal was armed
        return 1
    try:
        os.execvp(argv[1], argv[1:])
    except OSError as e:
        print(f"lifeline: cannot run {argv[1]}: {e.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
