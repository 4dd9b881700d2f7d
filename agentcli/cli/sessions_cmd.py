"""`agentcli sessions` (the runs kept, newest first; `prune` deletes old ones) and `agentcli show` (one run)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import typer

sessions_app = typer.Typer(
    help="The runs agentcli keeps: list them (no subcommand), or prune old ones.",
    invoke_without_command=True,
    no_args_is_help=False,
)

# A session whose journal was written to this recently may still be running: prune never deletes it.
ACTIVE_WINDOW_S = 600
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _repository(repo: Path) -> Path:
    from agentcli.session.undo import undo_root

    return undo_root(repo)


@sessions_app.callback(invoke_without_command=True)
def sessions_command(
    ctx: typer.Context,
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose runs to list."),
    limit: int = typer.Option(20, "--limit", "-n", help="How many of the newest runs to list."),
    every: bool = typer.Option(False, "--all", "-a", help="List the runs of every repository agentcli has state for."),
) -> None:
    """List the runs of this repository: when, status, steps, tokens, cost, sandbox, model, task; and where
    they are kept. `agentcli show SESSION` shows one; `agentcli sessions prune` deletes old ones."""
    if ctx.invoked_subcommand is not None:
        return
    from agentcli.paths import state_dir
    from agentcli.ui.runs import (
        JOURNAL,
        Run,
        clean_text,
        repo_folders,
        repository_label,
        repository_sessions,
        session_dirs,
    )

    if every:
        rows = []
        for folder in repo_folders():
            runs = [Run(d / JOURNAL) for d in session_dirs(folder / "sessions") if (d / JOURNAL).is_file()]
            label = repository_label(folder, runs)
            rows += [(run, label) for run in runs]
        rows.sort(key=lambda row: row[0].id, reverse=True)
        where = state_dir() / "repos"
        if not rows:
            typer.echo(f"no runs kept in {where}")
            return
        rows = rows[: max(1, limit)]
        groups: dict[str, list] = {}  # repositories in the order of their newest run
        for run, label in rows:
            groups.setdefault(label, []).append(run)
        _print_header()
        for label, runs in groups.items():
            typer.echo(f"repository: {clean_text(label)}")
            _print_rows(runs)
        typer.echo(f"\njournals: {where}/<repo>/sessions/<session>/events.jsonl")
        typer.echo("`agentcli show SESSION` shows one")
        return

    root = _repository(repo)
    folder = repository_sessions(root)
    runs = [Run(d / JOURNAL) for d in session_dirs(folder) if (d / JOURNAL).is_file()]
    if not runs:
        typer.echo(f"no runs kept for {root} (they would be in {folder})")
        return
    _print_header()
    _print_rows(runs[: max(1, limit)])
    typer.echo(f"\njournals: {folder}/<session>/events.jsonl")
    typer.echo("`agentcli show SESSION` shows one; `agentcli undo SESSION` takes one back")


COLUMNS = (
    f"{'SESSION':<22} {'AGE':>4} {'STATUS':<11} {'STEPS':>5} {'TOKENS':>6} {'COST':>6} {'SANDBOX':<7} {'MODEL':<14} "
)


def _print_header() -> None:
    typer.echo(COLUMNS + "TASK")


def _print_rows(runs: list) -> None:
    """One line a run, within 100 columns; the task takes what room a wider terminal has."""
    from agentcli.ui.runs import age, clean_text, clip, cost, short_model, tokens

    now = time.time()
    task_width = max(16, shutil.get_terminal_size((100, 24)).columns - len(COLUMNS) - 1)
    for run in runs:
        started = run.start_time
        line = (
            f"{run.id:<22} {age(now - started) if started else '?':>4} {run.status:<11} {run.steps:>5} "
            f"{tokens(run.tokens_in + run.tokens_out):>6} {cost(run.cost):>6} {clip(run.sandbox, 7):<7} "
            f"{clip(short_model(run.model), 14):<14} "
        )
        typer.echo(clean_text(line + clip(run.task, task_width)))


def parse_age(value: str) -> float:
    """`30d`, `12h`, `90m`, `45s`, `2w` in seconds."""
    from agentcli.errors import UsageError

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", value or "")
    if not match:
        raise UsageError(f"bad --older-than {value!r}: give a number and a unit (s, m, h, d, w), e.g. 30d or 12h")
    return float(match.group(1)) * UNITS[match.group(2)]


@sessions_app.command("prune")
def prune_command(
    older_than: str = typer.Option(None, "--older-than", help="Delete runs older than this: 30d, 12h, 90m, 45s."),
    keep: int = typer.Option(None, "--keep", help="Keep at least the newest N runs of each repository.", min=0),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose runs to prune."),
    every: bool = typer.Option(False, "--all", "-a", help="Prune the runs of every repository agentcli has state for."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be deleted; delete nothing."),
) -> None:
    """Delete old runs (journals and saved command output). A run written to in the last 10 minutes is never
    deleted: it may still be going. `--older-than` and `--keep` together delete only runs that are both older
    and beyond the newest N."""
    from agentcli.errors import UsageError
    from agentcli.paths import state_dir
    from agentcli.ui.runs import age, repo_folders, repository_sessions, session_dirs

    if older_than is None and keep is None:
        raise UsageError("say what to prune: --older-than AGE (e.g. 30d) and/or --keep N")
    limit = parse_age(older_than) if older_than is not None else None
    folders = [f / "sessions" for f in repo_folders()] if every else [repository_sessions(_repository(repo))]
    state = state_dir().resolve()
    now = time.time()
    removed = kept_active = 0
    for folder in folders:
        dirs = session_dirs(folder)  # newest first; symlinks and folders not named like a session are left out
        for index, session in enumerate(dirs):
            if keep is not None and index < keep:
                continue
            last = _last_written(session)
            if limit is not None and now - last < limit:
                continue
            if now - last < ACTIVE_WINDOW_S:
                kept_active += 1
                typer.echo(f"kept {session.name}: written to {age(now - last)} ago, it may still be running")
                continue
            if not _inside(session, state):
                typer.echo(f"kept {session.name}: not inside agentcli's state folder {state}")
                continue
            where = f" ({folder.parent.name})" if every else ""
            if dry_run:
                typer.echo(f"would remove {session.name}{where}, last written {age(now - last)} ago")
            else:
                shutil.rmtree(session)  # refuses a symbolic link; never follows one inside
                typer.echo(f"removed {session.name}{where}, last written {age(now - last)} ago")
            removed += 1
    verb = "would remove" if dry_run else "removed"
    extra = f"; kept {kept_active} that may still be running" if kept_active else ""
    typer.echo(f"{verb} {removed} run{'s' if removed != 1 else ''}{extra}")


def _last_written(session: Path) -> float:
    times = [session.lstat().st_mtime]
    journal = session / "events.jsonl"
    if journal.is_file() and not journal.is_symlink():
        times.append(journal.lstat().st_mtime)
    return max(times)


def _inside(session: Path, state: Path) -> bool:
    """The session folder is a real folder under the state folder, reached through no link."""
    if session.is_symlink() or not session.is_dir():
        return False
    return session.resolve().is_relative_to(state)


def show_command(
    session: str = typer.Argument(None, help="Session id, or a unique prefix of one (default: the latest run)."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose runs to look in first."),
    html: Path = typer.Option(None, "--html", help="Write the run as one self-contained HTML page to this file."),
    full: bool = typer.Option(False, "--full", help="Show every line of every output, not a fold."),
) -> None:
    """Show a run step by step: the task, the plan, each reply, command and output, the result; or write it
    as a page (`--html FILE`)."""
    from agentcli.errors import AgentcliError, UsageError
    from agentcli.ui.runs import Run, find_session

    root = None
    try:
        root = _repository(repo)
    except AgentcliError:
        if session is None:
            raise
    run = Run(find_session(session, root))
    if html is not None:
        from agentcli.ui.page import render_page

        try:
            html.write_text(render_page(run), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {html}: {e.strerror}") from None
        typer.echo(f"wrote {html} (session {run.id}, {run.status})")
        return
    from rich.console import Console

    from agentcli.ui.show import render_run

    render_run(run, Console(highlight=False), full=full)
