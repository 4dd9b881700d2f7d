"""agentcli's containers as the engine knows them: their labels, who owns them, and removing orphans.

Every sandbox container carries labels naming agentcli, its session and the process that owns it
(host name, pid and that process's start time, so a recycled pid is not taken for the owner). A
container whose owner died without removing it (SIGKILL, a crash, a power cut) is an orphan: the
next agentcli run that uses Docker removes it, and so does `agentcli sandbox prune`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.lifeline import process_alive

if TYPE_CHECKING:
    from docker import APIClient

MANAGED = "org.agentcli.managed"
SESSION = "org.agentcli.session"
OWNER_PID = "org.agentcli.owner-pid"
OWNER_HOST = "org.agentcli.owner-host"
OWNER_STARTED = "org.agentcli.owner-started"


def process_started(pid: int) -> str:
    """When `pid` started, in clock ticks since boot ("" if unknown): with the pid, names one process."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def owner_labels(session_id: str) -> dict[str, str]:
    """The labels of a container owned by this process, for `session_id`."""
    pid = os.getpid()
    return {
        MANAGED: "1",
        SESSION: session_id,
        OWNER_PID: str(pid),
        OWNER_HOST: socket.gethostname(),
        OWNER_STARTED: process_started(pid),
    }


def owner_alive(labels: dict[str, str]) -> bool | None:
    """Whether the owning process still runs: None when it is on another host (we cannot tell)."""
    if labels.get(OWNER_HOST) != socket.gethostname():
        return None
    try:
        pid = int(labels.get(OWNER_PID, ""))
    except ValueError:
        return False
    if not process_alive(pid):
        return False
    started = labels.get(OWNER_STARTED, "")
    return not started or process_started(pid) in ("", started)


@dataclass
class SandboxContainer:
    """One agentcli container, as `agentcli sandbox ls` shows it."""

    id: str
    name: str
    session: str
    owner_pid: str
    alive: bool | None
    created: float  # epoch seconds
    image: str
    state: str

    @property
    def orphan(self) -> bool:
        return self.alive is False


def list_containers(api: APIClient) -> list[SandboxContainer]:
    """Every container labelled as agentcli's, running or not, oldest first."""
    found = []
    for info in api.containers(all=True, filters={"label": f"{MANAGED}=1"}):
        labels = info.get("Labels") or {}
        found.append(
            SandboxContainer(
                id=info["Id"],
                name=(info.get("Names") or ["?"])[0].lstrip("/"),
                session=labels.get(SESSION, "?"),
                owner_pid=labels.get(OWNER_PID, "?"),
                alive=owner_alive(labels),
                created=float(info.get("Created") or 0),
                image=_short_image(info.get("Image", "?")),
                state=info.get("State", "?"),
            )
        )
    return sorted(found, key=lambda c: c.created)


def _short_image(image: str) -> str:
    return image[7:19] if image.startswith("sha256:") else image


def remove_container(api: APIClient, ref: str) -> bool:
    """Kill and remove a container by id or name; False if it was already gone."""
    from docker.errors import APIError, NotFound

    try:
        api.remove_container(ref, force=True, v=True)
    except NotFound:
        return False
    except APIError as e:
        # Removal already under way (another process pruning the same orphan): it will be gone.
        if "already in progress" in str(e):
            return True
        raise
    return True


def prune_orphans(api: APIClient, *, everything: bool = False) -> list[SandboxContainer]:
    """Remove the containers of dead owners on this host (all of agentcli's with `everything`)."""
    removed = []
    for container in list_containers(api):
        if everything or container.orphan:
            with contextlib.suppress(Exception):
                if remove_container(api, container.id):
                    removed.append(container)
    return removed


def age(created: float, now: float | None = None) -> str:
    """'42s', '5m', '3h', '2d': how long ago `created` (epoch seconds) was."""
    seconds = max(0, int((now or time.time()) - created))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
