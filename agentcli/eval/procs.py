"""Child processes of an eval: each in its own session, stopped as a group, all stoppable at once.

Every agent run, solution and test run is a child process started in a new session, so a
Ctrl-C in the terminal reaches only the eval, which then stops its children in an orderly way:
SIGTERM first (an agentcli run unwinds and closes its sandbox), SIGKILL to the group if it
lingers. If the eval itself is killed outright, `lifeline` sends each child SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

TERM_GRACE_S = 15.0  # how long a child may take to unwind after SIGTERM before SIGKILL


@dataclass
class Finished:
    returncode: int
    seconds: float
    timed_out: bool = False
    stopped: bool = False  # stopped because the whole eval is stopping


class Stopping(Exception):
    """The eval is being interrupted: no new child may start."""


class Children:
    """The live child processes of one eval, shared by its worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()
        self.stopping = threading.Event()

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float | None,
        stdout: Path,
        stderr: Path | None = None,
    ) -> Finished:
        """Run to completion or timeout; output goes to files (never to the eval's terminal)."""
        started = time.monotonic()
        with contextlib.ExitStack() as files:
            out = files.enter_context(open(stdout, "wb"))
            err = files.enter_context(open(stderr, "wb")) if stderr is not None else subprocess.STDOUT
            with self._lock:
                if self.stopping.is_set():
                    raise Stopping()
                proc = subprocess.Popen(
                    with_lifeline(argv),
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
                self._live.add(proc)
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                stop_group(proc)
            except BaseException:  # interrupted while waiting (a cancelled Ray rollout): the child goes too
                stop_group(proc)
                raise
            finally:
                with self._lock:
                    self._live.discard(proc)
        return Finished(proc.returncode, time.monotonic() - started, timed_out, self.stopping.is_set())

    def stop_all(self) -> None:
        """Refuse new children and stop every live one (in parallel: each may take its grace period)."""
        self.stopping.set()
        with self._lock:
            live = list(self._live)
        threads = [threading.Thread(target=stop_group, args=(p,), daemon=True) for p in live]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def with_lifeline(argv: list[str]) -> list[str]:
    """On Linux, `argv` behind `lifeline`: it gets SIGTERM if this process is killed outright."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-m", "agentcli.eval.lifeline", str(os.getpid()), *argv]


def stop_group(proc: subprocess.Popen, grace: float = TERM_GRACE_S) -> None:
    """SIGTERM the child's process group, then SIGKILL it if the child has not exited in time."""
    if proc.poll() is not None:
        return
    _signal_group(proc, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Even after the leader exits, something it started in its group may be left: kill the group.
    _signal_group(proc, signal.SIGKILL)
    proc.wait()


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)
