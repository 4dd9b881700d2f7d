"""Run many rollouts on a pool of worker threads, each driving its own child processes.

Threads are enough: the work happens in child processes (agent runs, tests) and their sandboxes.
On Ctrl-C or SIGTERM the eval stops every child (they unwind and close their sandboxes), drops
the tasks caught half-way (they get no result, so --resume runs them again) and returns.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.eval.agents import AgentRun, Runner
from agentcli.eval.procs import Children, Stopping
from agentcli.eval.results import TaskResult
from agentcli.eval.rollouts import Rollout
from agentcli.eval.runner import run_task
from agentcli.session.solve import Terminated, signals_interrupt


@dataclass
class SuiteRun:
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False
    fatal: str = ""  # why the eval stopped early: nothing more could run


def run_suite(
    rollouts: list[Rollout],
    runner: Runner,
    trajectories: Path,
    *,
    workers: int = 1,
    on_result: Callable[[TaskResult], None] = lambda result: None,
) -> SuiteRun:
    """Run `rollouts`; `on_result` is called in the calling thread as each one finishes."""
    run = SuiteRun()
    children = Children()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="eval")
    pending: dict[Future, Rollout] = {}
    try:
        with signals_interrupt(signal.SIGTERM, signal.SIGHUP):
            pending = {pool.submit(run_task, r, runner, children, trajectories): r for r in rollouts}
            while pending:
                # A timeout keeps the main thread responsive to signals while it waits.
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.pop(future)
                    outcome = _outcome(future)
                    if outcome is None:
                        continue
                    result, agent = outcome
                    run.results.append(result)
                    on_result(result)
                    if agent is not None and agent.fatal and not run.fatal:
                        run.fatal = agent.fatal
                        for f in pending:
                            f.cancel()  # tasks not yet started; running ones finish
    except (KeyboardInterrupt, Terminated):
        run.interrupted = True
        _stop(pool, children, pending)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return run


def _stop(pool: ThreadPoolExecutor, children: Children, pending: dict[Future, Rollout]) -> None:
    """Stop every child, even if another Ctrl-C arrives meanwhile, then let the workers return."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    previous_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        for future in pending:
            future.cancel()
        children.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)


def _outcome(future: Future) -> tuple[TaskResult, AgentRun | None] | None:
    if future.cancelled():
        return None
    try:
        return future.result()
    except Stopping:
        return None
