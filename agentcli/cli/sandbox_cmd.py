"""`agentcli sandbox`: the Docker sandbox image and the containers of sessions."""

from __future__ import annotations

import typer

sandbox_app = typer.Typer(
    help="The Docker sandbox: build its image, list and prune its containers.", no_args_is_help=True
)


@sandbox_app.callback()
def _sandbox() -> None:
    """The Docker sandbox that `--sandbox docker` runs commands in: its image and its containers."""


def _size(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.0f} MB"


@sandbox_app.command("build")
def build_cmd(
    offline: bool = typer.Option(
        False,
        "--offline",
        help="Make the base here with debootstrap (needs root) instead of pulling debian:bookworm-slim.",
    ),
    force: bool = typer.Option(False, "--force", help="Rebuild even if the image is up to date, without layer cache."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every line of build output."),
) -> None:
    """Build the default sandbox image if it is missing or its Dockerfile changed; print its tag."""
    from agentcli.sandbox.images import console_progress, ensure_image

    with console_progress(verbose=verbose) as progress:
        result = ensure_image(offline=True if offline else None, progress=progress, force=force)
    if result.built:
        timings = ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in result.timings.items())
        typer.echo(f"built {result.tag} from {result.base} ({_size(result.size)}; {timings})", err=True)
    else:
        typer.echo(f"{result.tag} is up to date", err=True)
    typer.echo(result.tag)


@sandbox_app.command("ls")
def ls_cmd() -> None:
    """List agentcli's containers: session, owner process (alive?), age, image, state."""
    from agentcli.sandbox.containers import age, list_containers
    from agentcli.sandbox.images import docker_client

    client = docker_client()
    try:
        containers = list_containers(client.api)
    finally:
        client.close()
    if not containers:
        typer.echo("no agentcli containers", err=True)
        return
    alive = {True: "alive", False: "dead", None: "other host"}
    rows = [("CONTAINER", "SESSION", "OWNER", "AGE", "IMAGE", "STATE")]
    rows += [
        (c.id[:12], c.session, f"{c.owner_pid} {alive[c.alive]}", age(c.created), c.image, c.state) for c in containers
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


@sandbox_app.command("prune")
def prune_cmd(
    everything: bool = typer.Option(
        False, "--all", help="Also remove the containers of sessions that are still running."
    ),
) -> None:
    """Remove the containers of sessions whose agentcli process has ended (e.g. was killed)."""
    from agentcli.sandbox.containers import prune_orphans
    from agentcli.sandbox.images import docker_client

    client = docker_client()
    try:
        removed = prune_orphans(client.api, everything=everything)
    finally:
        client.close()
    for container in removed:
        typer.echo(f"removed {container.id[:12]} (session {container.session})")
    typer.echo(f"{len(removed)} container(s) removed", err=True)
