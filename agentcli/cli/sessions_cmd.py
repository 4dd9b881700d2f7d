"""`agentcli sessions`: the runs kept for a repository, newest first, and where their journals are."""

from __future__ import annotations

from pathlib import Path

import typer


def sessions_command(
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose runs to list."),
    limit: int = typer.Option(20, "--limit", "-n", help="How many of the newest runs to list."),
) -> None:
    """List the runs of this repository: when, status, steps, tokens, the task; and where they are kept."""
    from agentcli.session.journal import read_events, sessions_dir
    from agentcli.session.undo import undo_root

    root = undo_root(repo)
    folder = sessions_dir(root)
    journals = sorted(folder.glob("*/events.jsonl"), key=lambda path: path.parent.name, reverse=True)
    if not journals:
        typer.echo(f"no runs kept for {root} (they would be in {folder})")
        return
    typer.echo(f"{'SESSION':<24}{'STATUS':<12}{'STEPS':>6}{'TOKENS':>9}  TASK")
    for journal in journals[: max(1, limit)]:
        events = read_events(journal)
        started = next((e for e in events if e.get("type") == "run_started"), {})
        results = [e for e in events if e.get("type") == "result"]
        result = results[-1] if results else {}
        status = result.get("status", "unfinished")
        tokens = int(result.get("tokens_in") or 0) + int(result.get("tokens_out") or 0)
        task = " ".join(str(started.get("task", "")).split())
        task = task if len(task) <= 60 else task[:57] + "..."
        typer.echo(f"{journal.parent.name:<24}{status:<12}{result.get('steps', 0):>6}{tokens:>9}  {task}")
    typer.echo(f"\njournals: {folder}/<session>/events.jsonl; `agentcli undo SESSION` takes one back")
