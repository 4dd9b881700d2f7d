"""Pick and build the sandbox a run asked for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli.config import Settings
from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.sandbox.base import Sandbox, SandboxUnavailable
from agentcli.sandbox.local import BwrapSandbox, HostSandbox, Limits, bwrap_available


def docker_ready() -> bool:
    """A Docker backend exists in this install and an engine answers."""
    try:
        from agentcli.sandbox.docker import engine_available
    except ImportError:
        return False
    return engine_available()


def resolve_backend(requested: str) -> str:
    """`auto` becomes the strongest backend available here; a named one must be available."""
    if requested == "auto":
        if docker_ready():
            return "docker"
        if bwrap_available():
            return "bwrap"
        raise ComponentUnavailable(
            "no sandbox available: start Docker or install bubblewrap, or pass --sandbox host to run unisolated"
        )
    if requested == "bwrap" and not bwrap_available():
        raise ComponentUnavailable("bubblewrap is not usable here: install it (apt-get install bubblewrap)")
    if requested == "docker" and not docker_ready():
        raise ComponentUnavailable("Docker engine not reachable: start Docker or use --sandbox bwrap")
    if requested not in ("docker", "bwrap", "host"):
        raise UsageError(f"unknown sandbox {requested!r}: use auto, docker, bwrap or host")
    return requested


def create_sandbox(
    backend: str,
    repo: Path,
    control_dir: Path,
    settings: Settings,
    notify: Callable[[str], None] = lambda message: None,
) -> Sandbox:
    limits = Limits(memory_mb=settings.memory_mb, pids=settings.pids, cpus=settings.cpus, network=settings.network)
    try:
        if backend == "docker":
            from agentcli.sandbox.docker import DockerSandbox

            return DockerSandbox(
                repo,
                control_dir,
                limits=limits,
                output_limit=settings.output_limit,
                image=settings.image,
                notify=notify,
                workdir=settings.container_workdir,
            )
        cls = {"bwrap": BwrapSandbox, "host": HostSandbox}[backend]
        return cls(repo, control_dir, limits=limits, output_limit=settings.output_limit)
    except SandboxUnavailable as e:
        raise ComponentUnavailable(str(e)) from None
