"""The REPL's slash commands: a table of names and help, and what each one does."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from agentcli.errors import UsageError
from agentcli.repo import checkpoint as cp
from agentcli.ui.approval import MODES, parse_mode

if TYPE_CHECKING:
    from agentcli.ui.repl import Repl


@dataclass
class SlashCommand:
    name: str
    usage: str
    help: str
    run: Callable[[Repl, str], bool | None]  # True ends the session


def dispatch(repl: Repl, text: str) -> bool:
    """Run one `/command args` line; an unknown name gets a one-line hint with the closest match."""
    name, _, arg = text[1:].partition(" ")
    command = COMMANDS.get(name.lower()) or COMMANDS.get(ALIASES.get(name.lower(), ""))
    if command is None:
        close = difflib.get_close_matches(name.lower(), list(COMMANDS), n=1, cutoff=0.5)
        hint = f" — did you mean /{close[0]}?" if close else ""
        repl.console.print(f"[yellow]unknown command /{escape(name)}{hint}[/] [dim](/help lists them)[/]")
        return False
    return bool(command.run(repl, arg.strip()))


def completions() -> list[tuple[str, str]]:
    return [(c.name, c.help) for c in COMMANDS.values()]


# -- the commands ---------------------------------------------------------------------------------


def _help(repl: Repl, arg: str) -> None:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    for command in COMMANDS.values():
        table.add_row(f"[bold]{escape(command.usage)}[/]", command.help)
    table.add_row("[bold]!COMMAND[/]", "run COMMAND in the sandbox yourself; the model hears of it with the next task")
    repl.console.print(table)
    repl.console.print(
        "[dim]Enter sends · Esc-Enter or a trailing \\ adds a line · Tab completes commands and paths · "
        "Ctrl-C stops the model or a command · Ctrl-C at an empty prompt twice, or Ctrl-D, leaves[/]"
    )


def _plan(repl: Repl, arg: str) -> None:
    assert repl.agent is not None
    plan = repl.agent.ctx.outcome.plan
    if not plan:
        repl.console.print("[dim]no plan yet: the model has not written one[/]")
        return
    for i, step in enumerate(plan, 1):
        repl.console.print(f"{i}. {escape(step)}")


def _need_git(repl: Repl, what: str) -> bool:
    if not repl.use_git:
        repl.console.print(f"[yellow]{what} needs git; this session runs with --no-git[/]")
        return False
    return True


def _diff(repl: Repl, arg: str) -> None:
    if not _need_git(repl, "/diff"):
        return
    since = repl.checkpoints[-1] if arg == "last" and repl.checkpoints else repl.start_checkpoint
    if since is None:
        repl.console.print("[dim]no task has run yet: nothing to compare[/]")
        return
    patch = cp.diff_since(repl.root, since)
    if not patch.strip():
        repl.console.print("[dim]no changes since the session started[/]")
        return
    repl.console.print(Syntax(patch, "diff", word_wrap=True, background_color="default"))
    repl.console.print(Syntax(cp.diff_since(repl.root, since, stat=True), "text", background_color="default"))


def _undo(repl: Repl, arg: str) -> None:
    if not _need_git(repl, "/undo"):
        return
    if not repl.checkpoints:
        repl.console.print("[dim]nothing to undo in this session[/]")
        return
    from agentcli.session.undo import undo

    checkpoint = repl.checkpoints.pop()
    with repl.sandbox.frozen():  # a checkpoint means a task ran: nothing the sandbox runs races undo's writes
        report = undo(repl.root, checkpoint.name)
    count = len(report.restored) + len(report.removed_ignored)
    repl.console.print(f"undone: the repository is back to before the last task ({count} paths restored)")
    repl.console.print(f"[dim]the undone state is kept as {cp.BEFORE_UNDO_REFS}/{report.session}[/]")
    repl.notes.append("The user undid the previous task: its file changes were reverted.")


def _commit(repl: Repl, arg: str) -> None:
    if not _need_git(repl, "/commit"):
        return
    if repl.start_checkpoint is None:
        repl.console.print("[dim]no task has run yet: nothing to commit[/]")
        return
    paths = [path for _, path in cp.changed_paths(repl.root, repl.start_checkpoint)]
    if not paths:
        repl.console.print("[dim]no changes since the session started: nothing to commit[/]")
        return
    message = arg or repl.last_summary or repl.last_task or "changes made with agentcli"
    git = cp.Git(repl.root)
    try:
        git("add", "-A", "--", *paths)
        git("commit", "-q", "-m", message, "--", *paths)
    except Exception as error:  # git's own message says what is wrong (no identity, a hook failed)
        detail = getattr(error, "stderr", "") or str(error)
        lines = [line.strip() for line in str(detail).strip().splitlines() if line.strip()]
        raise UsageError(f"git commit failed: {lines[-1] if lines else 'unknown error'}") from None
    head = git("log", "-1", "--format=%h %s")
    repl.console.print(f"committed {len(paths)} file(s): {escape(head)}")


def _model(repl: Repl, arg: str) -> None:
    assert repl.session is not None and repl.agent is not None
    if not arg:
        repl.console.print(f"model: {escape(repl.session.model.name)} [dim](/model NAME switches)[/]")
        return
    model = repl.session.load_model(arg)
    repl.session.model = repl.agent.ctx.model = model
    repl.console.print(f"model: [cyan]{escape(model.name)}[/] from the next step on; the history is kept")


def _sandbox(repl: Repl, arg: str) -> None:
    assert repl.session is not None
    s = repl.settings
    backend = repl.session.backend
    isolation = {
        "host": "none: commands run on this machine as you",
        "bwrap": "bubblewrap: the repository writable, system folders read-only, no home, own namespaces, seccomp",
        "docker": "a Docker container",
    }.get(backend, backend)
    network = "on" if s.network else "off"
    if backend == "host":
        network = "the host's"
    repl.console.print(f"sandbox: [cyan]{backend}[/] · {isolation}")
    repl.console.print(
        f"workdir {escape(repl.sandbox.workdir)} · network {network} · command timeout {s.command_timeout:g}s"
    )
    if backend != "host":
        repl.console.print(f"limits: memory {s.memory_mb} MiB · {s.cpus:g} CPUs · {s.pids} processes")
    repl.console.print("[dim]the sandbox is chosen at start: agentcli repl --sandbox NAME[/]")


def _compact(repl: Repl, arg: str) -> None:
    assert repl.session is not None
    context = repl.session.context
    if repl.fresh or not context.recent:
        repl.console.print("[dim]nothing to compact yet[/]")
        return
    if not _fold_all_but_last(context):  # when it folds, the window reports it as an event
        repl.console.print("[dim]nothing to compact: the history is only the last step[/]")


def _fold_all_but_last(context) -> int:
    """Fold every step but the last into the summary notes now; how many messages were folded."""
    if hasattr(context, "compact"):
        return context.compact()
    last = max((i for i, m in enumerate(context.recent) if m["role"] == "assistant"), default=0)
    if last > 0:
        context._compact(last)  # the window's own fold, as its high-water mark would trigger it
    return last


def _tokens(repl: Repl, arg: str) -> None:
    assert repl.session is not None and repl.agent is not None
    o = repl.agent.ctx.outcome
    context = repl.session.context
    used = context.tokens() if not repl.fresh else 0
    repl.console.print(
        f"tokens: {o.tokens_in:,} in · {o.tokens_out:,} out over {o.steps} steps · "
        f"context {used:,} of {context.available:,} ({used / max(1, context.available):.0%})"
    )


def _cost(repl: Repl, arg: str) -> None:
    assert repl.agent is not None
    cost = repl.agent.ctx.outcome.cost
    if cost:
        repl.console.print(f"cost so far: ${cost:.4f}")
    else:
        repl.console.print("cost so far: $0 (a local or scripted model, or a price the provider does not publish)")


def _clear(repl: Repl, arg: str) -> None:
    repl.fresh = True
    repl.notes.clear()
    repl.console.clear()
    repl.console.print("[dim]new conversation: the model forgets earlier tasks; files and the sandbox stay[/]")


def _save(repl: Repl, arg: str) -> None:
    assert repl.session is not None
    target = Path(arg).expanduser() if arg else repl.session.journal.dir / "transcript.md"
    if not target.is_absolute():
        target = repl.root / target
    messages = [] if repl.fresh else repl.session.context.messages()
    parts = [f"# agentcli session {repl.session.id}\n"]
    for message in messages:
        parts.append(f"## {message['role']}\n\n{message['content'].rstrip()}\n")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(parts))
    except OSError as error:
        raise UsageError(f"cannot write {target}: {error.strerror}") from None
    repl.console.print(f"saved the conversation to {escape(str(target))}")
    repl.console.print(f"[dim]every event is also in {escape(str(repl.session.journal.path))}[/]")


def _mode(repl: Repl, arg: str) -> None:
    assert repl.approvals is not None
    if arg:
        repl.approvals.mode = parse_mode(arg)
    repl.console.print(f"approval mode: [cyan]{repl.approvals.mode}[/] [dim]({' · '.join(MODES)})[/]")


def _exit(repl: Repl, arg: str) -> bool:
    return True


COMMANDS: dict[str, SlashCommand] = {
    c.name: c
    for c in [
        SlashCommand("help", "/help", "this list", _help),
        SlashCommand("plan", "/plan", "the model's current plan", _plan),
        SlashCommand("diff", "/diff [last]", "the change since the session started (or since the last task)", _diff),
        SlashCommand("undo", "/undo", "put the repository back as it was before the last task", _undo),
        SlashCommand("commit", "/commit [MESSAGE]", "commit the files this session changed", _commit),
        SlashCommand("model", "/model [NAME]", "show or switch the model", _model),
        SlashCommand("sandbox", "/sandbox", "where commands run and with which limits", _sandbox),
        SlashCommand("compact", "/compact", "fold older steps into notes to free context", _compact),
        SlashCommand("tokens", "/tokens", "tokens used and how full the context is", _tokens),
        SlashCommand("cost", "/cost", "what the session has cost", _cost),
        SlashCommand("clear", "/clear", "start a new conversation (files and sandbox stay)", _clear),
        SlashCommand("save", "/save [FILE]", "save the conversation as Markdown", _save),
        SlashCommand("mode", "/mode [NAME]", "show or switch the approval mode: " + ", ".join(MODES), _mode),
        SlashCommand("exit", "/exit", "end the session", _exit),
    ]
}
ALIASES = {"quit": "exit", "q": "exit", "?": "help"}
