"""`agentcli sandbox`: the Docker sandbox image."""

from __future__ import annotations

import typer

sandbox_app = typer.Typer(help="The Docker sandbox image: build it.", no_args_is_help=True)


@sandbox_app.callback()
def _sandbox() -> None:
    """The Docker sandbox image that `--sandbox docker` runs commands in."""


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
