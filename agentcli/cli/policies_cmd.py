"""`agentcli policies`: the agent's heuristics, which of them a run applies, and why each exists."""

from __future__ import annotations

from pathlib import Path

import typer


def policies_command(
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose config applies."),
    profile: str = typer.Option(None, "--profile", help="Show this profile instead of the configured one."),
    policy: list[str] = typer.Option(None, "--policy", help="Switch one policy: NAME=off or NAME=on (repeatable)."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the catalogue as docs/policies.md holds it."),
) -> None:
    """List every policy: on or off for this run's settings, whether it reads the task's wording, and why."""
    from agentcli.config import load_settings
    from agentcli.policies import CATALOG, Policies, catalogue_markdown

    if markdown:
        typer.echo(catalogue_markdown(), nl=False)
        return
    settings = load_settings(repo, {"profile": profile, "policies": policy or None})
    chosen = Policies.chosen(settings.profile, settings.policies)
    typer.echo(
        f"profile {settings.profile}" + (f", switches {', '.join(settings.policies)}" if settings.policies else "")
    )
    width = max(len(p.name) for p in CATALOG)
    for p in CATALOG:
        state = "on " if chosen.on(p.name) else "off"
        typer.echo(f"{state} {p.name:<{width}} {'task' if p.reads_task else '    '} {p.why}")
