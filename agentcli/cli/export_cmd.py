"""`agentcli export`: a run's trajectory in a standard format, for trainers and viewers."""

from __future__ import annotations

import json
from pathlib import Path

import typer

FORMATS = ("atif", "jsonl", "tokens")


def export_command(
    session: str = typer.Argument(None, help="Session id or a unique prefix (default: the latest run)."),
    format: str = typer.Option(
        "atif", "--format", "-f", help="atif (Harbor's ATIF v1.4), jsonl (the journal) or tokens (ids for trainers)."
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Write to FILE instead of standard output."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository the run was in."),
) -> None:
    """Write a run's trajectory: ATIF for trainers and Harbor's tools, the journal's JSON Lines, or the
    token ids of every model call with the trajectory's sequences and loss mask."""
    from agentcli.errors import UsageError
    from agentcli.session.atif import trajectory
    from agentcli.session.journal import read_events
    from agentcli.session.tokens import read_calls, sidecar
    from agentcli.session.undo import undo_root
    from agentcli.ui.runs import find_session

    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}: use {' or '.join(FORMATS)}")
    journal = find_session(session, undo_root(repo))
    calls = read_calls(journal.parent)
    if format == "jsonl":
        text = journal.read_text(encoding="utf-8")
    elif format == "tokens":
        if not calls:
            raise UsageError(f"session {journal.parent.name} has no token ids: only the llama.cpp backend records them")
        started = next((e for e in read_events(journal) if e.get("type") == "run_started"), {})
        text = json.dumps(sidecar(journal.parent.name, str(started.get("model", "")), calls)) + "\n"
    else:
        text = json.dumps(trajectory(read_events(journal), calls), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write {output}: {e.strerror}") from None
    typer.echo(f"wrote {output} ({format}, session {journal.parent.name})", err=True)
