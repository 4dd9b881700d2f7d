"""`agentcli map`: print the repository map the agent is shown."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.errors import UsageError


def map_command(
    path: Path = typer.Argument(Path("."), help="The repository or directory to map."),
    tokens: int | None = typer.Option(
        None, "--tokens", help="Token budget of the map [default: repo_map_tokens from config, 1024]."
    ),
    focus: str = typer.Option("", "--focus", help="Task text: files and names it mentions rank first."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Parse every file again; leave the cache alone."),
) -> None:
    """Print the most relevant definitions of the code, file by file, within a token budget."""
    if not path.exists():
        raise UsageError(f"no such directory: {path}")
    if not path.is_dir():
        raise UsageError(f"not a directory: {path}")
    if tokens is None:
        from agentcli.config import load_settings

        tokens = load_settings(repo=path).repo_map_tokens
    if tokens < 0:
        raise UsageError(f"--tokens must be 0 or more, not {tokens}")
    from agentcli.repo.repomap import build_repo_map

    text = build_repo_map(path, token_budget=tokens, mentioned=focus, cache=not no_cache)
    if text:
        typer.echo(text, nl=False)
