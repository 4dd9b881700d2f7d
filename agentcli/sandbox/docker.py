"""The Docker sandbox: one container per session, the repository at /workspace, the persistent shell inside.

The container idles; the session's bash is one `docker exec` whose stdin and stdout travel over the
engine's attach socket (demultiplexed here), so a command costs a round trip through that socket and
no process start in the engine. Commands run as the repository owner's uid:gid, without network,
capabilities or new privileges, on a read-only root with tmpfs /tmp and home, within memory, CPU,
pid and file-size limits. The container is removed when the sandbox closes; one left by a killed
run is removed by the next run (see `containers.prune_orphans`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.sandbox.accounts import HOME, accounts_for, image_files, write_accounts
from agentcli.sandbox.base import CHANNEL_INSIDE
from agentcli.sandbox.containers import owner_labels, prune_orphans, remove_container
from agentcli.sandbox.gitmounts import git_mounts
from agentcli.sandbox.local import BASH, Limits, ShellSandbox
from agentcli.sandbox.shell import DEFAULT_OUTPUT_LIMIT, bounded

if TYPE_CHECKING:
    from docker import APIClient, DockerClient

WORKDIR = "/workspace"
# How much of the shell's stderr the host keeps in its log.
MAX_SHELL_LOG = 16 << 20
# Folders of the container's own that the repository is never mounted over.
RESERVED = ("/run", "/proc", "/sys", "/dev", "/tmp", "/etc", "/usr", "/bin", "/lib", "/sbin", "/home/agent")
# The shell's own scratch files: a tmpfs of their own, so a full /tmp cannot cut its saved state,
# mounted ready-made because a `mkdir` in the bootstrap (the first exec through the image's storage
# driver) costs a good part of the start.
SCRATCH = "/run/agentcli-shell"
TMPFS = {
    "/tmp": "rw,exec,nosuid,nodev,mode=1777,size=512m",
    HOME: "rw,exec,nosuid,nodev,mode=1777,size=512m",
    SCRATCH: "rw,noexec,nosuid,nodev,mode=1777,size=16m",
}
# The container's first process (under docker-init) waits for the end of its stdin, which agentcli
# holds attached: when agentcli is gone, however it died, the engine closes that stdin, the process
# ends, and the container stops and is removed (no orphan outlives its owner by more than a moment).
# It needs nothing but bash, and runs as root (without capabilities) so the agent cannot kill it.
IDLE = ["bash", "-c", "while read -r _; do :; done"]


def engine_available() -> bool:
    """An engine answers here (a ping); never raises."""
    try:
        import docker
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception:
        return False
    return True


class DockerTransport:
    """A bash started with `docker exec`, stdin and stdout over the engine's attach socket.

    Without a tty the engine multiplexes the output: frames of an 8-byte header (stream: 1 stdout,
    2 stderr; then a big-endian length) and that many bytes. Stdout carries the sentinels; stderr
    (the shell's own complaints) goes to a log file.
    """

    def __init__(
        self,
        api: APIClient,
        container: str,
        *,
        user: str,
        environment: dict[str, str],
        workdir: str,
        stderr_path: Path,
    ):
        self._api = api
        self.exec_id = api.exec_create(
            container,
            BASH,
            stdin=True,
            stdout=True,
            stderr=True,
            tty=False,
            user=user,
            environment=[f"{k}={v}" for k, v in environment.items()],
            workdir=workdir,
        )["Id"]
        self._response = api.exec_start(self.exec_id, socket=True)
        # Over a unix socket the SDK hands back a SocketIO; the socket itself is what select needs.
        self._sock: socket.socket = getattr(self._response, "_sock", self._response)
        self._stderr = open(stderr_path, "ab")  # noqa: SIM115 - lives as long as the exec
        self._frames = b""
        self._stdout = b""
        self._eof = False

    def write(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError:
            self._eof = True  # the exec ended; read_line reports it

    def read_line(self, deadline: float) -> bytes | None:
        while b"\n" not in self._stdout:
            if self._eof:
                return b""
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            pending = getattr(self._sock, "pending", lambda: 0)()  # TLS buffers what select cannot see
            if not pending and not select.select([self._sock], [], [], remaining)[0]:
                continue
            try:
                chunk = self._sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                continue
            self._frames += chunk
            self._demultiplex()
        line, _, self._stdout = self._stdout.partition(b"\n")
        return line + b"\n"

    def _demultiplex(self) -> None:
        frames = self._frames
        while len(frames) >= 8:
            size = int.from_bytes(frames[4:8], "big")
            if len(frames) < 8 + size:
                break
            payload = frames[8 : 8 + size]
            if frames[0] == 2:
                if self._stderr.tell() < MAX_SHELL_LOG:  # the shell's own complaints, not a flood into the host's disk
                    self._stderr.write(payload)
                    self._stderr.flush()
            else:
                self._stdout = bounded(self._stdout + payload)
            frames = frames[8 + size :]
        self._frames = frames

    def host_pid(self) -> int | None:
        """The exec's process as the host numbers it, while it runs."""
        with contextlib.suppress(Exception):
            info = self._api.exec_inspect(self.exec_id)
            if info.get("Running") and info.get("Pid"):
                return int(info["Pid"])
        return None

    def exit_code(self) -> int | None:
        with contextlib.suppress(Exception):
            return self._api.exec_inspect(self.exec_id).get("ExitCode")
        return None

    def close(self) -> None:
        """End this bash (its stdin closes; a shell stuck in a command is killed) but not the container."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)
        pid = self.host_pid()
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for closable in (self._sock, self._response):
            with contextlib.suppress(Exception):
                closable.close()
        self._stderr.close()


class DockerSandbox(ShellSandbox):
    """One container per session; see the module's docstring."""

    name = "docker"

    def __init__(
        self,
        repo: Path,
        control_dir: Path,
        *,
        limits: Limits | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        image: str = "",
        notify: Callable[[str], None] | None = None,
        workdir: str = WORKDIR,
    ):
        """`workdir`: where the repository is mounted in the container (an image's own WORKDIR, say)."""
        limits = limits or Limits()
        for field in ("memory_mb", "cpus", "pids", "file_size_mb"):
            if not getattr(limits, field) > 0:
                raise UsageError(f"{field} must be positive, got {getattr(limits, field)!r}")
        super().__init__(repo, control_dir, limits=limits, output_limit=output_limit)
        self.workdir = workdir.rstrip("/")
        if not self.workdir.startswith("/") or any(_within(self.workdir, folder) for folder in RESERVED):
            raise UsageError(f"container_workdir must be an absolute folder of its own, not {workdir!r}")
        self.image = image
        self.notify = notify or (lambda message: None)
        # Commands run as the repository's owner where agentcli runs as root, else as the user who runs it
        # (never as an owner of higher privilege: a root-owned repository does not make them root).
        owner = self.repo.stat()
        self.uid, self.gid = (owner.st_uid, owner.st_gid) if os.geteuid() == 0 else (os.getuid(), os.getgid())
        self.session_id = _session_id(control_dir)
        self.container_name = f"agentcli-{self.session_id}-{secrets.token_hex(2)}"
        self.container_id: str | None = None
        self.image_ref: str | None = None
        self.image_id: str | None = None
        self.shell.oom_note = f"killed: out of memory (limit {self.limits.memory_mb} MiB)"
        self._client: DockerClient | None = None
        self._lifeline: Any = None  # the attached stdin of the container's first process
        self._environment: dict[str, str] = {}
        self._user = f"{self.uid}:{self.gid}"

    # -- paths ---------------------------------------------------------------------------------------

    def _inside(self, path: Path) -> str:
        return CHANNEL_INSIDE

    def _scratch(self) -> str | None:
        return SCRATCH

    def _file_owner(self) -> tuple[int, int] | None:
        return (self.uid, self.gid) if os.geteuid() == 0 and self.uid != 0 else None

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> None:
        from agentcli.sandbox.images import docker_client

        self._client = docker_client()
        api = self._client.api
        removed = prune_orphans(api)
        if removed:
            self.notify(f"removed {len(removed)} sandbox container(s) left by ended sessions")
        self.image_ref, self.image_id = self._resolve_image(api)
        try:
            self._create(api, self.image_ref, self.image_id)
            self.shell.start()
        except BaseException as error:
            from docker.errors import DockerException

            reason = self._why_not_running() if isinstance(error, (RuntimeError, DockerException)) else None
            self._remove()
            if reason is not None:
                raise ComponentUnavailable(
                    f"the sandbox did not start in {self.image_ref}: {reason or _one_line(error)} "
                    "(--image needs an image with bash)"
                ) from None
            raise

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process in the container paused (the cgroup freezer) for the block."""
        api = self._client.api if self._client is not None and self.container_id else None
        if api is not None:
            api.pause(self.container_id)
        try:
            yield
        finally:
            if api is not None:
                api.unpause(self.container_id)

    def close(self) -> None:
        try:
            self.shell.close()
        finally:
            self._remove()

    def _resolve_image(self, api: APIClient) -> tuple[str, str]:
        """(name, id) of the image to run: --image's, else the built-in one, built if missing."""
        from docker.errors import ImageNotFound

        if self.image:
            try:
                return self.image, api.inspect_image(self.image)["Id"]
            except ImageNotFound:
                raise ComponentUnavailable(
                    f"image {self.image!r} is not available locally: pull or build it first "
                    f"(docker pull {self.image}), or leave --image empty for agentcli's own"
                ) from None
        from agentcli.sandbox.images import ensure_image, image_tag

        tag = image_tag()
        with contextlib.suppress(ImageNotFound):
            return tag, api.inspect_image(tag)["Id"]
        self.notify(f"building the sandbox image {tag} (once; `agentcli sandbox build` does it ahead of time)")

        def progress(kind: str, text: str) -> None:
            if kind == "stage":
                self.notify(text)

        result = ensure_image(progress=progress, client=self._client)
        return result.tag, api.inspect_image(result.tag)["Id"]

    def _create(self, api: APIClient, image: str, image_id: str) -> None:
        from docker.types import Ulimit

        self.shell.channel.open()
        binds: dict[str, dict[str, str]] = {str(self.repo): {"bind": self.workdir, "mode": "rw"}}
        binds[str(self.control_dir.resolve())] = {"bind": CHANNEL_INSIDE, "mode": "rw"}
        protected = git_mounts(self.repo)
        for path, mode in [*((p, "rw") for p in protected.writable), *((p, "ro") for p in protected.read_only)]:
            binds[str(path)] = {"bind": f"{self.workdir}/{path.relative_to(self.repo).as_posix()}", "mode": mode}
        name, email = git_identity(self.repo)
        accounts = accounts_for(*image_files(api, image_id), self.uid, self.gid, gecos=name)
        if accounts.passwd is not None or accounts.group is not None:
            etc = self.private_dir / "accounts"
            etc.mkdir(exist_ok=True)
            for host, inside in write_accounts(accounts, etc).items():
                binds[host] = {"bind": inside, "mode": "ro"}
        self._environment = {
            "HOME": HOME,
            "USER": accounts.name,
            "LOGNAME": accounts.name,
            "EMAIL": email,  # git's default address (the repository's own config still wins)
            "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ litter in the user's tree
        }
        limits = self.limits
        file_size = limits.file_size_mb * 1024 * 1024
        host_config = api.create_host_config(
            binds=binds,
            network_mode="bridge" if limits.network else "none",
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",  # the same as memory: no swap
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs=dict(TMPFS),
            init=True,
            auto_remove=True,
            ulimits=[Ulimit(name="fsize", soft=file_size, hard=file_size)],
        )
        created = api.create_container(
            image,
            command=IDLE,
            stdin_open=True,  # with the SDK's StdinOnce: the stdin closes when its one client goes
            user="0:0",
            working_dir=self.workdir,
            hostname="sandbox",
            labels=owner_labels(self.session_id),
            environment=[],
            host_config=host_config,
            name=self.container_name,
        )
        self.container_id = created["Id"]
        self._lifeline = api.attach_socket(self.container_id, params={"stdin": 1, "stream": 1})
        api.start(self.container_id)

    def _start_transport(self) -> DockerTransport:
        assert self._client is not None and self.container_id is not None
        if os.geteuid() == 0 and self.uid != 0:
            # Created here as root; the container's user writes outputs and markers there.
            with contextlib.suppress(OSError):
                self.shell.channel.chown(self.uid, self.gid, (f"watchdog.{self.shell.restarts}",))
        return DockerTransport(
            self._client.api,
            self.container_id,
            user=self._user,
            environment=self._environment,
            workdir=self.workdir,
            stderr_path=self.private_dir / "shell.log",
        )

    def _why_not_running(self) -> str:
        """Why the container stopped, as its engine or its last output line says ("" if it runs)."""
        if self._client is None or self.container_id is None:
            return ""
        with contextlib.suppress(Exception):
            api = self._client.api
            state = api.inspect_container(self.container_id)["State"]
            if not state.get("Running"):
                logs = api.logs(self.container_id, tail=5).decode(errors="replace").strip().splitlines()
                return _one_line(state.get("Error") or (logs[-1] if logs else f"exit {state.get('ExitCode')}"))
        return ""

    def _remove(self) -> None:
        """Remove the container, even one whose creation was interrupted before its id came back."""
        if self._client is None:
            return
        with contextlib.suppress(Exception):
            remove_container(self._client.api, self.container_id or self.container_name)
        self.container_id = None
        if self._lifeline is not None:
            with contextlib.suppress(Exception):
                self._lifeline.close()
            self._lifeline = None
        with contextlib.suppress(Exception):
            self._client.close()
        self._client = None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:300]


def _session_id(control_dir: Path) -> str:
    """The session's id from `.../sessions/<id>/commands`, else a fresh one."""
    parent = control_dir.parent
    if parent.parent.name == "sessions" and parent.name:
        return "".join(c if c.isalnum() or c in "_.-" else "-" for c in parent.name)
    return f"adhoc-{secrets.token_hex(3)}"


def git_identity(repo: Path) -> tuple[str, str]:
    """The repository's git user (name, email), for the container's defaults; agentcli's own if none."""
    from agentcli.repo.git import Git, GitError

    name, email = "agentcli", "agentcli@localhost"
    with contextlib.suppress(GitError, OSError):
        out = Git(repo).try_("config", "--get-regexp", r"^user\.(name|email)$") or ""
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if key == "user.name" and value:
                name = value
            elif key == "user.email" and value:
                email = value
    return name, email
