"""A session (model, sandbox, journal, a checkpoint per task) and `agentcli solve`, one task in one session."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentcli import prompts
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.loop import Agent
from agentcli.agent.outcome import Approver, Outcome, Resumed, RunLimits
from agentcli.agent.recorded import RecordedSandbox
from agentcli.agent.selection import CHECK_SECONDS, Verdict, Verifier, pytest_verdict
from agentcli.agent.state import TaskFacts
from agentcli.config import Settings
from agentcli.context.window import ContextWindow, context_for_run
from agentcli.errors import (
    EXIT_FINISHED,
    EXIT_INTERRUPTED,
    EXIT_NOT_FINISHED,
    EXIT_UNAVAILABLE,
    AgentcliError,
    ComponentUnavailable,
    UsageError,
)
from agentcli.events import (
    EventBus,
    Listener,
    ModelCacheHit,
    ModelRetry,
    ModelSwitched,
    Notice,
    PolicyFired,
    RunFinished,
    RunStarted,
)
from agentcli.models.base import Model, ModelError, ModelUnavailable
from agentcli.models.resolve import create_routed_model, default_model_name
from agentcli.policies import Policies
from agentcli.repo import checkpoint as cp
from agentcli.repo import objects, publish
from agentcli.repo.git import GitError
from agentcli.repo.overview import list_files, repository_overview
from agentcli.repo.publish import Delivery
from agentcli.repo.tree_changes import TreeChanges
from agentcli.sandbox.base import Sandbox
from agentcli.sandbox.factory import create_sandbox, resolve_backend
from agentcli.session.attempts import run_attempts
from agentcli.session.checks import (
    PYTEST_EVERY,
    run_quietly,
    test_command,
)
from agentcli.session.done import (
    TaskState,
    broken_shell_now,
    failing_examples_now,
    failing_tests_now,
    repository_checks,
)
from agentcli.session.journal import Journal, new_session_id, sessions_dir
from agentcli.session.steps import StepMarker
from agentcli.session.task_setup import TaskSetup, read_task
from agentcli.session.tokens import TokenLog
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
    delivery: Delivery = field(default_factory=Delivery)


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


class Session:
    """What runs are made of, built once: events and journal, model, sandbox, a checkpoint per task.

    `solve` runs one task in a session; the REPL runs many, one after another, in the same sandbox.
    """

    def __init__(
        self,
        root: Path,
        settings: Settings,
        *,
        use_git: bool = True,
        listeners: list[Listener] | None = None,
        session_id: str | None = None,
    ):
        """`session_id`: go on with that session's journal (a resumed run); default: a new session."""
        self.root = root
        self.settings = settings
        self.policies = Policies.chosen(settings.profile, settings.policies)
        self.use_git = use_git
        self.events = EventBus(list(listeners or []))
        self.policies.on_fired = lambda name: self.events.emit(PolicyFired(name=name))
        self.id = session_id or new_session_id()
        self.journal = Journal(root, self.id)
        self.events.subscribe(self.journal)
        self.events.subscribe(TokenLog(self.journal.dir))
        self.steps = StepMarker(
            root,
            self.journal.commands_dir,
            self.events.emit,
            use_git=use_git,
            exclude=lambda: self._checkpoint.exclude if self._checkpoint else (),
        )
        self.events.subscribe(self.steps)
        model_name = settings.model or default_model_name()
        if not settings.model:
            self.notify(f"no model configured: using {model_name} (set --model or AGENTCLI_MODEL to change)")
        self.backend = resolve_backend(settings.sandbox)
        if settings.sandbox == "auto":
            self.notify(f"sandbox: {self.backend} (the strongest available here; --sandbox to choose)")
        prompts.choose(self._prompts_folder(), settings.prompt_family or prompts.family_of(model_name))
        self.model = self.load_model(model_name)
        self.context = context_for_run(self.model, settings, on_event=self.events.emit, notify=self.notify)
        # What one command's output may show the model follows from the window: at most about a quarter.
        limit = self.context.observation_chars(settings.output_limit)
        self.settings = dataclasses.replace(settings, output_limit=limit)
        self.sandbox: Sandbox | None = None
        self._tasks = 0
        self._checkpoint: cp.Checkpoint | None = None
        self._first_checkpoint: cp.Checkpoint | None = None
        # How the tests failed before the current task, where it does not speak of failures.
        self._failing_before: str | None = None

    def notify(self, message: str) -> None:
        self.events.emit(Notice(message=message))

    def load_model(self, name: str) -> Model:
        """`name` and the configured fallbacks behind one `Model`; retries, switches and cache hits as events."""

        def on_retry(attempt: int, delay: float, error: Exception) -> None:
            self.events.emit(ModelRetry(attempt=attempt, delay=delay, error=str(error)))

        def on_switch(old: str, new: str, why: str) -> None:
            self.events.emit(ModelSwitched(from_model=old, to_model=new, reason=why))
            # The console shows notices; the typed event above is for --json, the journal and recorders.
            self.events.emit(Notice(message=f"model switched: {why}", level="warning"))

        def on_cache_hit(model: str, key: str) -> None:
            self.events.emit(ModelCacheHit(model=model, key=key[:16]))

        return create_routed_model(
            name,
            self.settings,
            notify=self.notify,
            on_retry=on_retry,
            on_switch=on_switch,
            on_cache_hit=on_cache_hit,
            # Where this run works and keeps its outputs differs between two runs of one task: not part of a cache key.
            cache_masks=(str(self.root), str(self.journal.commands_dir.parent), self.id),
        )

    def create_sandbox(self) -> Sandbox:
        """The session's sandbox, not yet started."""
        made = create_sandbox(self.backend, self.root, self.journal.commands_dir, self.settings, notify=self.notify)
        self.sandbox = RecordedSandbox(made, self.events.emit)  # every command anything runs is journaled
        return self.sandbox

    def announce(self, task: str) -> None:
        assert self.sandbox is not None
        self.events.emit(
            RunStarted(
                session_id=self.id,
                task=task,
                model=self.model.name,
                sandbox=self.backend,
                workdir=self.sandbox.workdir,
                temperature=self.settings.temperature,
                seed=self.settings.seed,
                limits={name: getattr(self.settings, name) for name in RUN_LIMITS},
            )
        )

    def _prompts_folder(self) -> Path | None:
        """The user's own templates (the `prompts` setting), resolved; never a folder in the work tree,
        where the sandbox could write a template that runs on the host when rendered."""
        if not self.settings.prompts:
            return None
        folder = Path(self.settings.prompts).expanduser().resolve()
        if folder == self.root.resolve() or self.root.resolve() in folder.parents:
            raise UsageError(f"prompts: {folder} is inside the repository, which the sandbox can write")
        return folder

    def agent(self, approve: Approver | None = None) -> Agent:
        assert self.sandbox is not None
        agent = _agent(self.model, self.sandbox, self.events, self.settings, approve, self.context, self.policies)
        agent.ctx.tree_kept = self.tree_kept
        if self.use_git:
            agent.ctx.facts.tree_changes = TreeChanges(self.root, self._excluded)
        checks = repository_checks(self.task_state)
        if approve is None:  # where commands need the user's approval, none runs unasked
            checks += [
                DoneCheck(
                    "tests",
                    lambda: failing_tests_now(self.task_state(), self.sandbox, self.notify, self.tree_kept),
                    code=True,
                    gist_end=" (`",
                ),
                DoneCheck("shell-syntax", lambda: broken_shell_now(self.task_state(), self.sandbox), gist_end=" ("),
                DoneCheck(
                    "examples",
                    lambda: failing_examples_now(self.task_state(), self.sandbox, self.notify, self.tree_kept),
                    code=True,
                    gist_end=" (",
                ),
            ]
        agent.ctx.finish_checks = [check.asking(_unless_git_broke(check.ask)) for check in checks]
        return agent

    @property
    def checkpoint(self) -> cp.Checkpoint | None:
        """The checkpoint of the task at hand: the repository as it was before it."""
        return self._checkpoint

    def tree_kept(self) -> contextlib.AbstractContextManager[list[str]]:
        """A block whose changes to the work tree are put back: for commands agentcli runs on its own."""
        if not self.use_git:
            return contextlib.nullcontext([])
        return cp.tree_kept(self.root, self._excluded())

    def _excluded(self) -> tuple[str, ...]:
        """agentcli's own files in the work tree, left out of the task's snapshots."""
        return self._checkpoint.exclude if self._checkpoint else ()

    def task_state(self) -> TaskState:
        """What the checks on "done" know of the task at hand, as it stands now."""
        return TaskState(self.root, self._checkpoint, self._failing_before)

    def overview(self, task: str) -> str:
        return repository_overview(self.root, task, self.settings)

    def attempts(self, task: str, mark: TaskMark) -> Outcome:
        """Run the task, in as many attempts as the `retries` policy allows (session/attempts.py)."""
        return run_attempts(self, task, mark)

    def task_setup(self, task: str, *, resumed: bool = False) -> TaskSetup:
        """What the task asks, read once from its words and the repository as it is now. A `resumed` run
        excuses no failing test (policy `failing-before`): its tree is not the task's start, and the
        failures it caused itself are not older than the task."""
        setup = read_task(task, self.root, self.sandbox, self.policies, self.tree_kept, at_start=not resumed)
        self._failing_before = setup.failing_before
        return setup

    def prepared_agent(self, setup: TaskSetup) -> Agent:
        """An agent for the task, its checks on "done" set up."""
        agent = self.agent()
        agent.ctx.facts = TaskFacts(
            setup.outputs,
            verifier=self._verifier(),
            takes_back=self.use_git,
            ignored=self._ignored,
            tree_changes=agent.ctx.facts.tree_changes,
        )
        return agent

    def _verifier(self) -> Verifier | None:
        """The check candidate replies are judged by: the repository's tests, every one (see agent.selection);
        None where the repository has none we can run."""
        sandbox = self.sandbox
        # Without git the work tree cannot be put back after a candidate: no choosing.
        if sandbox is None or not self.use_git or test_command(list_files(self.root)) is None:
            return None

        def verdict() -> Verdict | None:
            obs = run_quietly(sandbox, PYTEST_EVERY, CHECK_SECONDS)
            return pytest_verdict(obs.exit_code, obs.output, obs.timed_out)

        return verdict

    def _ignored(self, paths: list[str]) -> bool:
        """Whether git on the host ignores one of `paths` (relative to the repository), with the user's
        global rules, as the snapshots do (the sandbox's git has another home); True where it cannot tell."""
        try:
            cp.Git(self.root)("check-ignore", "-q", "--", *paths)
        except GitError as e:
            return e.status != 1  # 1: none is ignored; anything else: it cannot tell
        return True

    def resume_task(self, task: str, at: Resumed, elapsed: float) -> Outcome:
        """Go on with a task from a journaled step (see `session/resume.py`): one attempt, no retries,
        within what the limits leave."""
        agent = self.prepared_agent(self.task_setup(task, resumed=True))
        agent.ctx.limits = dataclasses.replace(
            agent.ctx.limits,
            max_steps=max(0, self.settings.max_steps - (at.step - 1)),
            timeout=max(0.001, self.settings.timeout - elapsed) if self.settings.timeout else 0.0,
        )
        return agent.resume(at)

    def adopt_task(self, checkpoint: cp.Checkpoint | None, number: int = 1) -> None:
        """Take up the `number`th task of this session, which an earlier go began (a resumed run)."""
        self._tasks = number
        self._checkpoint = self._first_checkpoint = checkpoint

    def begin_task(self, written_by_us: tuple[Path, ...] = ()) -> TaskMark:
        """Checkpoint the repository before a task (its checks on "done" read it); the first checkpoint
        is named after the session.

        Files agentcli itself writes inside the repository (its redirected output, the patch file)
        are left out of the checkpoint and of the change.
        """
        checkpoint = None
        ignored: set[str] = set()
        if self.use_git:
            self._tasks += 1
            name = self.id if self._tasks == 1 else f"{self.id}-{self._tasks}"
            exclude = tuple(sorted(inside(self.root, [*own_output_files(), *written_by_us])))
            checkpoint = cp.create_checkpoint(self.root, name, exclude)
            ignored = cp.ignored_entries(self.root)
        self._checkpoint = checkpoint
        self._first_checkpoint = self._first_checkpoint or checkpoint
        return TaskMark(checkpoint, ignored, time.monotonic())

    def finish_task(
        self, mark: TaskMark, outcome: Outcome, *, task: str = "", delivery: Delivery | None = None
    ) -> RunFinished:
        """Record what the task changed, deliver it as asked (branch, patch), and emit its result."""
        if mark.checkpoint is not None:
            record_dir = sessions_dir(self.root) / mark.checkpoint.name
            record_dir.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(GitError):
                record_ignored(self.root, record_dir, mark.ignored_before)
            self._remove_planted(mark.checkpoint)
            with contextlib.suppress(GitError):
                if nested := cp.nested_repositories_added(self.root, mark.checkpoint):
                    self.notify(
                        f"the run made nested git repositories ({', '.join(nested[:5])}): git commands in or over "
                        "them use settings the run wrote; `agentcli undo` removes them"
                    )
                if changed := cp.git_settings_changed(self.root, mark.checkpoint):
                    shown = ", ".join(changed)
                    self.notify(f"the run changed git's own settings ({shown}): `agentcli undo` restores them")
        result = _result(outcome, self.id, self.root, mark.checkpoint, time.monotonic() - mark.started)
        if delivery is not None and mark.checkpoint is not None:
            self._deliver(result, mark.checkpoint, task, delivery)
        self.events.emit(result)
        return result

    def _deliver(self, result: RunFinished, checkpoint: cp.Checkpoint, task: str, delivery: Delivery) -> None:
        if delivery.patch_path is not None:
            try:
                publish.write_patch(self.root, delivery.patch_path, publish.change_patch(self.root, checkpoint))
                result.patch = str(delivery.patch_path)
            except OSError as e:
                result.status, result.reason = "failed", f"the patch was not written to {delivery.patch_path}: {e}"
        if delivery.branch and result.status == "finished" and result.files_changed:
            git = cp.Git(self.root)
            name = publish.branch_name(git, delivery.branch, task)
            message = delivery.commit_message or publish.commit_message(task, result.summary, self.id)
            try:
                result.commit = publish.commit_change(self.root, checkpoint, name, message)
                result.branch = name
            except AgentcliError as e:
                result.status, result.reason = "failed", f"finished, but the change was not committed: {e}"
        if not delivery.apply and result.files_changed:
            cp.restore(self.root, checkpoint, remove_branches=False)  # the branch delivered stays
            self.notify("the change was taken out of the working tree (--no-apply)")

    def close_sandbox(self) -> None:
        """Release the sandbox, even if a second Ctrl-C, a SIGTERM or a SIGHUP arrives meanwhile."""
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGTERM, signal.SIGHUP)}
        try:
            if self.sandbox is not None:
                self.sandbox.close()
                self.sandbox = None
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _remove_planted(self, checkpoint: cp.Checkpoint) -> None:
        if planted := cp.remove_planted(self.root, checkpoint):
            self.notify(f"removed what the run planted in git's folder: {', '.join(planted)}")
        with contextlib.suppress(GitError, OSError):
            if forged := cp.remove_forged_objects(self.root, checkpoint):
                shown = ", ".join(forged[:3]) + (", ..." if len(forged) > 3 else "")
                self.notify(
                    f"took out of git's object store what the run changed that is not what it claims ({shown}; "
                    f"a pack goes to .git/{objects.QUARANTINE})"
                )

    def close(self) -> None:
        self.close_sandbox()
        if self._first_checkpoint is not None:  # again once nothing in the sandbox can plant anew
            self._remove_planted(self._first_checkpoint)
        self.journal.close()


def own_output_files() -> list[Path]:
    """Regular files our stdout and stderr are redirected to (`agentcli solve --json > events.jsonl`)."""
    files = []
    for fd in (1, 2):
        try:
            target = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
        if target.is_file():
            files.append(target)
    return files


def inside(root: Path, paths: list[Path]) -> set[str]:
    """Those of `paths` that lie inside `root`, relative to it."""
    found = set()
    for path in paths:
        try:
            found.add(str(path.resolve().relative_to(root.resolve())))
        except ValueError:
            continue
    return found


# The settings that bound a run, and the policies that shape it: journaled with it, and kept by `agentcli resume`.
RUN_LIMITS = (
    "profile",
    "policies",
    "max_steps",
    "timeout",
    "command_timeout",
    "max_cost",
    "max_tokens",
    "max_format_errors",
    "context_budget",
    "reply_tokens",
    "candidates",
)


@dataclass
class TaskMark:
    """Where a task started: the repository's checkpoint, its ignored entries, the clock."""

    checkpoint: cp.Checkpoint | None
    ignored_before: set[str]
    started: float


@contextlib.contextmanager
def signals_interrupt(*signums: int) -> Iterator[None]:
    """Turn these signals (SIGTERM, SIGHUP) into `Terminated`, so they unwind like Ctrl-C."""

    def handler(signum, frame):
        raise Terminated()

    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def attempt(call: Callable[[], Outcome], outcome: Outcome) -> tuple[Outcome, int]:
    """Run `call`, its outcome as reported (`Outcome.judged`); an interrupt or a model or sandbox
    failure marks `outcome` instead of escaping."""
    try:
        outcome = call().judged()
        return outcome, EXIT_FINISHED if outcome.status == "finished" else EXIT_NOT_FINISHED
    except (KeyboardInterrupt, Terminated):
        outcome.status, outcome.reason = "interrupted", "interrupted by the user"
        return outcome, EXIT_INTERRUPTED
    except ModelUnavailable as e:
        outcome.status, outcome.reason = "error", f"model unavailable: {e}"
        return outcome, EXIT_UNAVAILABLE
    except ModelError as e:
        outcome.status, outcome.reason = "error", f"model error: {e}"
        return outcome, EXIT_NOT_FINISHED
    except ComponentUnavailable as e:
        outcome.status, outcome.reason = "error", str(e)
        return outcome, EXIT_UNAVAILABLE
    except (OSError, GitError) as e:  # what the sandbox did to its channel or the repository's git data
        outcome.status, outcome.reason = "error", f"the sandbox broke the run: {e}"
        return outcome, EXIT_NOT_FINISHED


def solve(request: SolveRequest) -> SolveResult:
    delivery = request.delivery
    if request.use_git:
        publish.validate_branch(request.repo, delivery.branch)
    elif delivery.branch or delivery.patch_path or not delivery.apply:
        raise UsageError("--branch, --output-patch and --no-apply need a git repository")
    if delivery.patch_path is not None:
        delivery.patch_path = publish.fixed_patch_path(delivery.patch_path)
    session = Session(request.repo, request.settings, use_git=request.use_git, listeners=request.listeners)
    try:
        session.context.check_task(request.task, str(request.repo))  # a --context-budget too small: exit 2
    except UsageError:
        session.close()
        raise
    mark = session.begin_task(written_by_us=(delivery.patch_path,) if delivery.patch_path else ())

    def run() -> Outcome:
        sandbox = session.create_sandbox()
        session.announce(request.task)
        sandbox.start()
        return session.attempts(request.task, mark)

    with signals_interrupt(signal.SIGTERM, signal.SIGHUP):  # a closed terminal unwinds like a kill
        try:
            outcome, exit_code = attempt(run, Outcome(status="failed", reason="not started"))
        finally:
            session.close_sandbox()
    suspended(session, outcome)
    result = session.finish_task(mark, outcome, task=request.task, delivery=request.delivery)
    session.close()
    if result.status != outcome.status:  # the delivery failed
        exit_code = EXIT_NOT_FINISHED
    return SolveResult(result, exit_code, mark.checkpoint, session.journal.path)


def suspended(session: Session, outcome: Outcome) -> None:
    """An interrupted run (Ctrl-C, SIGTERM, a closed terminal) can go on later: say how."""
    if outcome.status == "interrupted" and session.steps.last_step:
        session.notify(f"resume with: agentcli resume {session.id}")


def _agent(
    model: Model,
    sandbox: Sandbox,
    events: EventBus,
    settings: Settings,
    approve: Approver | None = None,
    context: ContextWindow | None = None,
    policies: Policies | None = None,
) -> Agent:
    limits = RunLimits(
        max_steps=settings.max_steps,
        timeout=settings.timeout,
        command_timeout=settings.command_timeout,
        max_cost=settings.max_cost,
        max_tokens=settings.max_tokens,
        max_format_errors=settings.max_format_errors,
        reply_tokens=settings.reply_tokens,
        candidates=settings.candidates,
    )
    return Agent(model, sandbox, events, limits=limits, approve=approve, context=context, policies=policies)


def _unless_git_broke(check: Callable[[], str | None]) -> Callable[[], str | None]:
    """A finish check that has nothing to say where the sandbox broke the repository's git data
    (`rm -rf .git`): the run still ends with its journal, and `undo` brings the data back."""

    def tolerant() -> str | None:
        try:
            return check()
        except GitError:
            return None

    return tolerant


def _result(
    outcome: Outcome, session_id: str, root: Path, checkpoint: cp.Checkpoint | None, wall_time: float
) -> RunFinished:
    files: list[str] = []
    diffstat = ""
    if checkpoint is not None:
        try:
            files = [path for _, path in cp.changed_paths(root, checkpoint)]
            diffstat = cp.diff_since(root, checkpoint, stat=True) if files else ""
        except GitError as e:
            why = (e.stderr.strip().splitlines() or ["git failed"])[-1][:120]
            damage = f"the repository's git data was damaged during the run ({why}): `agentcli undo` restores it"
            outcome = dataclasses.replace(outcome, status="failed", reason=damage)
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
        standing_doubt=outcome.standing_doubt,
    )
