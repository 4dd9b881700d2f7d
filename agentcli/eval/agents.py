"""What acts on a task's work dir: agentcli itself, the task's own solution (oracle), or nothing (no-op).

Each agentcli run is a child process, `agentcli solve --json`, rather than a call in a worker
thread: `solve()` turns SIGTERM into an orderly unwind with signal handlers, which Python allows
only in the main thread; a child can be killed when a model call overruns the time limit; a
crash stays in its task; and each worker has its own model instance, so an in-process llama.cpp
model is never shared between threads. Starting a process costs about a second per task.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentcli.errors import EXIT_UNAVAILABLE
from agentcli.eval.procs import Children, Finished
from agentcli.eval.tasks import Task
from agentcli.eval.workspace import Workspace, harness_env
from agentcli.paths import repo_state_dir
from agentcli.session.journal import sessions_dir

# A run gets the task's timeout as its own wall clock; past it plus this grace (a model reply
# started just before the limit, closing the sandbox), the harness stops it.
KILL_GRACE_S = 60.0
SOLUTION_TIMEOUT_S = 120.0


class TaskError(Exception):
    """The task cannot be run (e.g. --oracle and no solution.sh): reported for that task alone."""


@dataclass
class AgentRun:
    """How the agent's part of a task went, before the tests."""

    status: str  # finished | failed | interrupted | error | timeout
    reason: str = ""
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    exit_code: int | None = None
    fatal: str = ""  # set when no later task can run either (e.g. the model is unavailable)
    stopped: bool = False  # the eval is being interrupted


@dataclass
class RunConfig:
    """The settings every task of an eval runs with."""

    timeout: float = 300.0
    model: str = ""
    sandbox: str = ""
    max_steps: int | None = None
    api_base: str = ""
    extra_args: list[str] = field(default_factory=list)
    trajectory_format: str = "jsonl"  # "atif": an ATIF trajectory beside each task's journal too
    env: dict[str, str] = field(default_factory=dict)  # for agentcli's process (AGENTCLI_* settings of a task)
    seed: int | None = None  # the rollout's sampling seed (--samples); None: the configured one


class Runner(Protocol):
    name: str
    config: RunConfig

    def __init__(self, config: RunConfig) -> None: ...

    def run(self, task: Task, ws: Workspace, children: Children, out_dir: Path) -> AgentRun: ...


class NoopRunner:
    """An agent that does nothing: every task of a sound suite must fail."""

    name = "noop"

    def __init__(self, config: RunConfig):
        self.config = config

    def run(self, task: Task, ws: Workspace, children: Children, out_dir: Path) -> AgentRun:
        return AgentRun(status="finished", reason="no-op: left the work dir untouched")


class OracleRunner:
    """Runs the task's solution.sh in the work dir: every task of a sound suite must pass."""

    name = "oracle"

    def __init__(self, config: RunConfig):
        self.config = config

    def run(self, task: Task, ws: Workspace, children: Children, out_dir: Path) -> AgentRun:
        if not task.solution.is_file():
            raise TaskError("missing solution.sh (needed by --oracle)")
        timeout = min(self.config.timeout, SOLUTION_TIMEOUT_S) if self.config.timeout else SOLUTION_TIMEOUT_S
        done = children.run(
            ["bash", str(task.solution)],
            cwd=ws.workdir,
            env=harness_env(),
            timeout=timeout,
            stdout=out_dir / "solution.log",
        )
        run = AgentRun(status="finished", seconds=round(done.seconds, 3), exit_code=done.returncode)
        run.stopped = done.stopped
        if done.timed_out:
            run.status, run.reason = "timeout", f"solution.sh ran past {timeout:g} s"
        elif done.returncode != 0:
            why = last_line(out_dir / "solution.log")
            run.status, run.reason = "failed", f"solution.sh exited {done.returncode}: {why}"
        return run


class AgentcliRunner:
    """`agentcli solve --json` in the work dir, with the eval's settings as flags."""

    name = "agentcli"

    def __init__(self, config: RunConfig):
        self.config = config

    def argv(self, task: Task, ws: Workspace, instruction: Path) -> list[str]:
        c = self.config
        argv = [sys.executable, "-m", "agentcli", "solve", "--task-file", str(instruction)]
        argv += ["--repo", str(ws.workdir), "--json", "--quiet", "--ci"]
        if c.timeout:
            argv += ["--timeout", f"{c.timeout:g}"]
        for flag, value in (("--model", c.model), ("--sandbox", c.sandbox), ("--api-base", c.api_base)):
            if value:
                argv += [flag, value]
        if c.max_steps is not None:
            argv += ["--max-steps", str(c.max_steps)]
        return argv + c.extra_args

    def env(self) -> dict[str, str]:
        # A re-run replays the model calls it already made from the response cache (AGENTCLI_CACHE=0: off).
        settings = {"AGENTCLI_CACHE": os.environ.get("AGENTCLI_CACHE", "true"), **self.config.env}
        if self.config.seed is not None:
            settings["AGENTCLI_SEED"] = str(self.config.seed)
        return harness_env(**settings)

    def run(self, task: Task, ws: Workspace, children: Children, out_dir: Path) -> AgentRun:
        instruction = task.dir / "instruction.md"
        if not instruction.is_file():  # the older Terminal-Bench layout keeps it in task.yaml
            instruction = out_dir / "instruction.md"
            instruction.write_text(task.instruction + "\n", encoding="utf-8")
        done = children.run(
            self.argv(task, ws, instruction),
            cwd=ws.workdir,
            env=self.env(),
            timeout=self.config.timeout + KILL_GRACE_S if self.config.timeout else None,
            stdout=out_dir / "agent.jsonl",
            stderr=out_dir / "agent.log",
        )
        result = read_result(out_dir / "agent.jsonl")
        run = from_result_event(result, done)
        if result is None and run.status == "error":  # it stopped before a result: its one-line error says why
            run.reason = last_line(out_dir / "agent.log") or f"agentcli exited {done.returncode}"
        if done.returncode == EXIT_UNAVAILABLE:
            run.fatal = run.reason
        save_journal(ws.workdir, out_dir)
        if self.config.trajectory_format == "atif":
            write_atif(out_dir)
        return run


def read_result(path: Path) -> dict | None:
    """The `result` event of a JSON Lines event stream, if the run got that far."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            return event
    return None


def from_result_event(result: dict | None, done: Finished) -> AgentRun:
    run = AgentRun(status="error", seconds=round(done.seconds, 3), exit_code=done.returncode, stopped=done.stopped)
    if result is not None:
        run.status = str(result.get("status", "error"))
        run.reason = str(result.get("reason", ""))
        for name in ("steps", "tokens_in", "tokens_out"):
            setattr(run, name, int(result.get(name) or 0))
        run.cost = float(result.get("cost") or 0.0)
    if done.timed_out:
        run.status, run.reason = "timeout", f"stopped by the harness after {done.seconds:.0f} s"
    return run


def save_journal(workdir: Path, out_dir: Path) -> None:
    """Move agentcli's session records of the work dir (kept in its state folder) into the trajectory folder."""
    sessions = sessions_dir(workdir)
    if sessions.is_dir():
        for session in sorted(p for p in sessions.iterdir() if p.is_dir()):
            shutil.copytree(session, out_dir / "session", dirs_exist_ok=True, symlinks=True, ignore=_special_files)
    shutil.rmtree(repo_state_dir(workdir), ignore_errors=True)


def write_atif(out_dir: Path) -> None:
    """`trajectory.atif.json` from the task's journal, where the run got as far as having one."""
    from agentcli.session.atif import trajectory
    from agentcli.session.journal import read_events
    from agentcli.session.tokens import read_calls

    journal = out_dir / "session" / "events.jsonl"
    if journal.is_file():
        document = trajectory(read_events(journal), read_calls(journal.parent))
        (out_dir / "trajectory.atif.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _special_files(directory: str, names: list[str]) -> list[str]:
    """Names in `directory` that are neither files, folders nor links: the FIFO a crashed run leaves."""
    special = []
    for name in names:
        path = Path(directory, name)
        if not (path.is_symlink() or path.is_file() or path.is_dir()):
            special.append(name)
    return special


def last_line(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


RUNNERS = {"agentcli": AgentcliRunner, "oracle": OracleRunner, "noop": NoopRunner}
