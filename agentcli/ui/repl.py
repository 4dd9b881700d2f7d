"""The interactive session: tasks one after another on one model, one sandbox, one history.

Each task gets a checkpoint first, so /undo takes exactly that task back. Ctrl-C stops the model
call or command in progress and comes back to the prompt with the session intact; Ctrl-C again at
the empty prompt, or Ctrl-D, ends the session. The sandbox is closed on every way out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import signal
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import Outcome
from agentcli.config import Settings
from agentcli.errors import EXIT_INTERRUPTED, AgentcliError
from agentcli.events import CommandFinished, CommandStarted, declared_done
from agentcli.paths import data_dir
from agentcli.repo.checkpoint import Checkpoint
from agentcli.sandbox.base import Sandbox, shell_paths
from agentcli.session.solve import Session, Terminated, attempt, signals_interrupt
from agentcli.ui import slash
from agentcli.ui.approval import MODES, Answer, Approvals, default_mode
from agentcli.ui.edits import CommandKind
from agentcli.ui.input import ask_approval, task_prompt
from agentcli.ui.live import LiveRenderer

NOTE_OUTPUT_CHARS = 1500


class Repl:
    """One interactive session in a repository."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        *,
        use_git: bool = True,
        mode: str | None = None,
        console: Console | None = None,
        history: Path | None = None,
    ):
        self.root = root
        self.settings = settings
        self.use_git = use_git
        self.console = console or Console(highlight=False)
        self.history = history if history is not None else data_dir() / "repl_history"
        self.renderer = LiveRenderer(self.console)
        self._requested_mode = mode
        self.session: Session | None = None
        self.agent: Agent | None = None
        self.approvals: Approvals | None = None
        self.checkpoints: list[Checkpoint] = []  # one per task still undoable, newest last
        self.start_checkpoint: Checkpoint | None = None  # before the first task: what /diff and /commit cover
        self.notes: list[str] = []  # told to the model with the next task
        self.fresh = True  # the next task starts a new conversation
        self.last_task = ""
        self.last_summary = ""
        self._armed = False  # a Ctrl-C at the empty prompt now ends the session
        self._status = ""

    # -- the session ------------------------------------------------------------------------------

    @property
    def sandbox(self) -> Sandbox:
        assert self.session is not None and self.session.sandbox is not None
        return self.session.sandbox

    def run(self) -> int:
        """Open the session, read and run input until the user leaves, close everything.

        Returns 0 when the user left, EXIT_INTERRUPTED after SIGTERM, SIGHUP or a lost terminal.
        """
        code = 0
        with signals_interrupt(signal.SIGTERM, signal.SIGHUP):
            try:
                self._open()
                self._loop()
            except Terminated:
                code = EXIT_INTERRUPTED
                with contextlib.suppress(OSError):
                    self.console.print("[yellow]terminated[/]")
            except OSError as error:
                if error.errno not in (errno.EIO, errno.EPIPE, errno.EBADF):
                    raise
                code = EXIT_INTERRUPTED  # the terminal went away
            finally:
                self._close()
        return code

    def _open(self) -> None:
        self.session = session = Session(self.root, self.settings, use_git=self.use_git, listeners=[self.renderer])
        self.renderer.control_dir = session.journal.commands_dir
        mode = self._requested_mode or default_mode(session.backend)
        self.approvals = Approvals(mode, inside=self._inside, ask=self._ask)
        sandbox = session.create_sandbox()
        with self.console.status(f"starting the {session.backend} sandbox…", spinner="dots"):
            sandbox.start()
        self.agent = session.agent(approve=self.approvals)
        self._banner()
        self._refresh_status()

    def _close(self) -> None:
        # Neither a second signal nor a terminal that is gone may leave the sandbox behind.
        previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            with contextlib.suppress(OSError):
                self.renderer.reset()
            if self.session is not None:
                self.session.close()
                with contextlib.suppress(OSError):
                    self.console.print(f"[dim]session {self.session.id} saved in {self.session.journal.dir}[/]")
        finally:
            signal.signal(signal.SIGHUP, previous)

    def _banner(self) -> None:
        assert self.session is not None and self.approvals is not None
        s = self.session
        self.console.print(
            f"[bold]agentcli[/] · model [cyan]{escape(s.model.name)}[/] · sandbox [cyan]{s.backend}[/] · "
            f"mode [cyan]{self.approvals.mode}[/] · {escape(str(self.root))}"
        )
        if s.backend == "host":
            asks = {"suggest": "each one asks first", "auto-edit": "all but workspace edits ask first"}
            how = asks.get(self.approvals.mode, "[bold]none of them asks first[/]")
            self.console.print(f"[yellow]commands run on this machine, unisolated: {how}[/]")
        self.console.print(
            "[dim]Type a task. /help lists commands, !cmd runs a command, Esc-Enter adds a line, Ctrl-D leaves.[/]"
        )

    # -- the prompt loop --------------------------------------------------------------------------

    def _loop(self) -> None:
        prompt = task_prompt(self.root, self.history, slash.completions, MODES, lambda: self._status)
        while True:
            try:
                line = prompt.prompt("› ")
            except KeyboardInterrupt:
                if self._armed:
                    return
                self._armed = True
                self.console.print("[dim]Ctrl-C again (or Ctrl-D) to leave[/]")
                continue
            except EOFError:
                return
            self._armed = False
            try:
                if self.dispatch(line.strip()):
                    return
            except KeyboardInterrupt:
                self.renderer.reset()
                self._interrupted(say=True)
            except AgentcliError as error:
                self.renderer.reset()
                self.console.print(f"[red]{escape(str(error))}[/]")
            self._refresh_status()

    def dispatch(self, text: str) -> bool:
        """Act on one input; True when the session should end."""
        if not text:
            return False
        if text.startswith("/"):
            return slash.dispatch(self, text)
        if text.startswith("!"):
            self.run_shell(text[1:].strip())
            return False
        self.run_task(text)
        return False

    def _interrupted(self, say: bool = False) -> None:
        self._armed = True
        word = "[yellow]interrupted[/] · " if say else ""
        self.console.print(f"{word}[dim]the session is intact: type the next task, or Ctrl-C again to leave[/]")

    # -- tasks ----------------------------------------------------------------------------------

    def run_task(self, text: str) -> None:
        session, agent = self.session, self.agent
        assert session is not None and agent is not None
        if self.fresh:
            session.context.check_task(text, self.sandbox.workdir)
        mark = session.begin_task()
        if mark.checkpoint is not None:
            self.checkpoints.append(mark.checkpoint)
            self.start_checkpoint = self.start_checkpoint or mark.checkpoint
        session.announce(text)
        task = self._with_notes(text)
        before = dataclasses.replace(agent.ctx.outcome)

        terminated = False

        def work() -> Outcome:
            nonlocal terminated
            try:
                if self.fresh:
                    self.fresh = False
                    return agent.run(task, context_text=session.overview(text))
                return agent.continue_with(task)
            except Terminated:
                terminated = True
                raise

        outcome, _ = attempt(work, agent.ctx.outcome)
        self.renderer.reset()
        declared = declared_done(outcome.status, outcome.standing_doubt)
        this_task = Outcome(
            status=outcome.status,
            reason=outcome.reason,
            summary=outcome.summary if declared else "",
            standing_doubt=outcome.standing_doubt,
            steps=outcome.steps - before.steps,
            tokens_in=outcome.tokens_in - before.tokens_in,
            tokens_out=outcome.tokens_out - before.tokens_out,
            cost=outcome.cost - before.cost,
        )
        session.finish_task(mark, this_task)
        self.last_task, self.last_summary = text, this_task.summary
        self._refresh_status()
        self.console.print(f"[dim]{escape(self._status)}[/]")
        if terminated:
            raise Terminated()  # the task's result is recorded; now end the session
        if outcome.status == "interrupted":
            self._interrupted()

    def _with_notes(self, text: str) -> str:
        if not self.notes:
            return text
        notes, self.notes = self.notes, []
        return "Since your last step:\n" + "\n".join(f"- {note}" for note in notes) + f"\n\n{text}"

    def run_shell(self, command: str) -> None:
        """`!command`: run it in the sandbox as the user, and tell the model with the next task."""
        if not command:
            self.console.print("[dim]usage: !COMMAND runs COMMAND in the sandbox[/]")
            return
        self.renderer(CommandStarted(step=0, command=command))
        try:
            obs = self.sandbox.run(command, timeout=self.settings.command_timeout)
        except KeyboardInterrupt:
            self.renderer.reset()
            self._interrupted(say=True)
            return
        self.renderer(CommandFinished(step=0, **dataclasses.asdict(obs)))
        output = obs.output if len(obs.output) <= NOTE_OUTPUT_CHARS else "…" + obs.output[-NOTE_OUTPUT_CHARS:]
        self.notes.append(f"The user ran `{command}` (exit {obs.exit_code}); its output:\n{output}")

    # -- approvals ------------------------------------------------------------------------------

    def _ask(self, command: str, kind: CommandKind) -> Answer:
        self.renderer.reset()
        title = "edit" if kind.edit else "command"
        self.console.print(
            Panel(Syntax(command, "bash", word_wrap=True), title=title, title_align="left", border_style="yellow")
        )
        return ask_approval(command, kind)

    def _inside(self, path: str) -> bool:
        """Whether `path`, relative to the shell's current directory, lies in the workspace."""
        (relative,) = shell_paths(self.sandbox, [path])
        if relative is None:
            return False
        try:
            (self.root / relative).resolve().relative_to(self.root.resolve())
        except ValueError:
            return False  # a symlink out of the workspace
        return True

    # -- the status line ------------------------------------------------------------------------

    def _refresh_status(self) -> None:
        self._status = self.status_line()

    def status_line(self) -> str:
        session, agent, approvals = self.session, self.agent, self.approvals
        if session is None or agent is None or approvals is None:
            return ""
        o = agent.ctx.outcome
        context = session.context
        fill = context.tokens() / max(1, context.available) if not self.fresh else 0.0
        shown = f"{fill:.0%}" if fill >= 0.1 or fill == 0 else f"{fill:.1%}"
        cost = f"${o.cost:.4f}" if o.cost else "$0"
        name = session.model.name
        if len(name) > 40:
            name = "…" + name[-39:]
        return (
            f"{name} · {session.backend} sandbox · {approvals.mode} · "
            f"{o.tokens_in + o.tokens_out:,} tokens · context {shown} · {cost}"
        )
