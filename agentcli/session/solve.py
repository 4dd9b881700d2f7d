"""One `agentcli solve` run: repository, checkpoint, model, sandbox, loop, result."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.agent.loop import Agent, Outcome, RunLimits
from agentcli.config import Settings
from agentcli.errors import (
    EXIT_FINISHED,
    EXIT_INTERRUPTED,
    EXIT_NOT_FINISHED,
    EXIT_UNAVAILABLE,
    ComponentUnavailable,
    UsageError,
)
from agentcli.events import EventBus, Listener, ModelRetry, Notice, RunFinished, RunStarted
from agentcli.models.base import Model, ModelError, ModelUnavailable
from agentcli.models.resolve import create_model, default_model_name
from agentcli.repo import checkpoint as cp
from agentcli.repo.overview import repository_overview
from agentcli.sandbox.base import Sandbox
from agentcli.sandbox.factory import create_sandbox, resolve_backend
from agentcli.session.journal import Journal, new_session_id
from agentcli.session.undo import record_ignored


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C so every resource is released."""


@dataclass
class SolveRequest:
    task: str
    repo: Path
    settings: Settings
    use_git: bool = True
    listeners: list[Listener] = field(default_factory=list)


@dataclass
class SolveResult:
    result: RunFinished
    exit_code: int
    checkpoint: cp.Checkpoint | None = None
    journal_path: Path | None = None


def locate_repository(path: Path, use_git: bool) -> Path:
    """The root the agent works in: the git work tree containing `path`, or `path` with --no-git."""
    if not path.exists():
        raise UsageError(f"repository path does not exist: {path}")
    if not path.is_dir():
        raise UsageError(f"repository path is not a directory: {path}")
    if not use_git:
        return path.resolve()
    root = cp.find_repo_root(path)
    if root is None:
        raise UsageError(f"{path.resolve()} is not inside a git repository: run `git init` there or pass --no-git")
    return root.resolve()


def solve(request: SolveRequest) -> SolveResult:
    settings = request.settings
    root = request.repo
    events = EventBus(list(request.listeners))
    session_id = new_session_id()
    journal = Journal(root, session_id)
    events.subscribe(journal)
    notify: Callable[[str], None] = lambda message: events.emit(Notice(message=message))  # noqa: E731

    model_name = settings.model or default_model_name()
    if not settings.model:
        notify(f"no model configured: using {model_name} (set --model or AGENTCLI_MODEL to change)")
    backend = resolve_backend(settings.sandbox)
    if settings.sandbox == "auto":
        notify(f"sandbox: {backend} (the strongest available here; --sandbox to choose)")

    def on_retry(attempt: int, delay: float, error: Exception) -> None:
        events.emit(ModelRetry(attempt=attempt, delay=delay, error=str(error)))

    model = create_model(model_name, settings, notify=notify, on_retry=on_retry)
    checkpoint = cp.create_checkpoint(root, session_id) if request.use_git else None
    ignored_before = cp.ignored_entries(root) if checkpoint else set()
    started = time.monotonic()
    outcome = Outcome(status="failed", reason="not started")
    exit_code = EXIT_NOT_FINISHED
    previous_handler = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, on_sigterm)
    sandbox: Sandbox | None = None
    try:
        sandbox = create_sandbox(backend, root, journal.commands_dir, settings, notify=notify)
        events.emit(
            RunStarted(
                session_id=session_id,
                task=request.task,
                model=model.name,
                sandbox=backend,
                workdir=sandbox.workdir,
            )
        )
        sandbox.start()
        agent = _agent(model, sandbox, events, settings)
        outcome = agent.run(request.task, context_text=repository_overview(root, request.task, settings))
        exit_code = EXIT_FINISHED if outcome.status == "finished" else EXIT_NOT_FINISHED
    except (KeyboardInterrupt, Terminated):
        outcome.status, outcome.reason = "interrupted", "interrupted by the user"
        exit_code = EXIT_INTERRUPTED
    except ModelUnavailable as e:
        outcome.status, outcome.reason = "error", f"model unavailable: {e}"
        exit_code = EXIT_UNAVAILABLE
    except ModelError as e:
        outcome.status, outcome.reason = "error", f"model error: {e}"
    except ComponentUnavailable as e:
        outcome.status, outcome.reason = "error", str(e)
        exit_code = EXIT_UNAVAILABLE
    finally:
        # Release everything even if a second Ctrl-C arrives while we clean up.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            if sandbox is not None:
                sandbox.close()
        finally:
            signal.signal(signal.SIGTERM, previous_handler)
    if checkpoint is not None:
        record_ignored(root, journal.dir, ignored_before)
    result = _result(outcome, session_id, root, checkpoint, time.monotonic() - started)
    events.emit(result)
    journal.close()
    return SolveResult(result, exit_code, checkpoint, journal.path)


def _agent(model: Model, sandbox: Sandbox, events: EventBus, settings: Settings) -> Agent:
    limits = RunLimits(
        max_steps=settings.max_steps,
        timeout=settings.timeout,
        command_timeout=settings.command_timeout,
        max_cost=settings.max_cost,
        max_tokens=settings.max_tokens,
        max_format_errors=settings.max_format_errors,
        reply_tokens=settings.reply_tokens,
    )
    return Agent(model, sandbox, events, limits=limits)


def _result(
    outcome: Outcome, session_id: str, root: Path, checkpoint: cp.Checkpoint | None, wall_time: float
) -> RunFinished:
    files: list[str] = []
    diffstat = ""
    if checkpoint is not None:
        files = [path for _, path in cp.changed_paths(root, checkpoint)]
        diffstat = cp.diff_since(root, checkpoint, stat=True) if files else ""
    return RunFinished(
        status=outcome.status,
        reason=outcome.reason,
        summary=outcome.summary,
        steps=outcome.steps,
        tokens_in=outcome.tokens_in,
        tokens_out=outcome.tokens_out,
        cost=round(outcome.cost, 6),
        wall_time=round(wall_time, 3),
        files_changed=files,
        diffstat=diffstat,
        session_id=session_id,
    )
