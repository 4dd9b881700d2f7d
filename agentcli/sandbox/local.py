"""Sandboxes that run bash as a local process: `host` (no isolation) and `bwrap` (bubblewrap)."""

from __future__ import annotations

import functools
import resource
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agentcli.sandbox.base import Observation, SandboxUnavailable, host_path
from agentcli.sandbox.environment import scrubbed_environment
from agentcli.sandbox.shell import DEFAULT_OUTPUT_LIMIT, PersistentShell, ProcessTransport

BASH = ["bash", "--noprofile", "--norc"]
# Directories under $HOME that hold credentials; bwrap hides them behind empty tmpfs mounts.
SECRET_HOME_DIRS = (".ssh", ".aws", ".gnupg", ".docker", ".kube", ".config/gcloud", ".azure", ".netrc")


@dataclass
class Limits:
    """Resource limits for one sandbox session."""

    memory_mb: int = 4096
    pids: int = 512
    cpus: float = 2.0
    file_size_mb: int = 2048
    network: bool = False


class ShellSandbox:
    """A sandbox that shares the repository's path with the host and drives a `PersistentShell`."""

    name = "shell"

    def __init__(
        self,
        repo: Path,
        control_dir: Path,
        *,
        limits: Limits | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ):
        self.repo = repo.resolve()
        self.workdir = str(self.repo)
        self.control_dir = control_dir
        self.limits = limits or Limits()
        self.shell = PersistentShell(
            self._start_transport,
            control_dir,
            self._inside(control_dir),
            output_limit=output_limit,
            scratch_inside=self._scratch(),
        )

    def _inside(self, path: Path) -> str:
        return str(path.resolve())

    def _scratch(self) -> str | None:
        """A private directory, best on a tmpfs, for the shell's own per-command files (None: beside the commands)."""
        return None

    def _start_transport(self) -> ProcessTransport:
        raise NotImplementedError

    def start(self) -> None:
        self.shell.start()

    def run(self, command: str, timeout: float | None = None) -> Observation:
        return self.shell.run(command, timeout)

    def read_file(self, path: str) -> str:
        return host_path(self.repo, self.workdir, path).read_text(errors="replace")

    def write_file(self, path: str, content: str) -> None:
        target = host_path(self.repo, self.workdir, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)

    def close(self) -> None:
        self.shell.close()

    def __enter__(self) -> ShellSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HostSandbox(ShellSandbox):
    """No isolation: commands run as the user, on the host. Only used when asked for by name."""

    name = "host"

    def _scratch(self) -> str | None:
        # Rewriting a small file costs ~2 ms on ext4 and microseconds on a tmpfs.
        if not Path("/dev/shm").is_dir():
            return None
        try:
            self._scratch_dir = Path(tempfile.mkdtemp(prefix="agentcli-shell-", dir="/dev/shm"))
        except OSError:
            return None
        return str(self._scratch_dir)

    def close(self) -> None:
        super().close()
        scratch = getattr(self, "_scratch_dir", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def _start_transport(self) -> ProcessTransport:
        return ProcessTransport(
            BASH,
            cwd=self.repo,
            env=scrubbed_environment(),
            stderr_path=self.control_dir / "shell.log",
        )


class BwrapSandbox(ShellSandbox):
    """bubblewrap: the repository writable, the rest of the system read-only, no network,
    its own PID namespace, credentials in $HOME hidden, rlimits on memory, processes and file size."""

    name = "bwrap"

    def _scratch(self) -> str | None:
        return "/tmp/.agentcli-shell"  # /tmp is the sandbox's own tmpfs

    def __init__(self, *args, **kwargs):
        if not bwrap_available():
            raise SandboxUnavailable("bubblewrap is not usable here: install it (apt-get install bubblewrap)")
        super().__init__(*args, **kwargs)

    def argv(self) -> list[str]:
        args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        home = Path.home()
        for name in SECRET_HOME_DIRS:
            secret = home / name
            if secret.is_dir() and not self.repo.is_relative_to(secret):
                args += ["--tmpfs", str(secret)]
            elif secret.is_file():
                args += ["--ro-bind", "/dev/null", str(secret)]
        args += ["--bind", str(self.repo), str(self.repo)]
        args += ["--unshare-all"] + (["--share-net"] if self.limits.network else [])
        args += ["--die-with-parent", "--new-session", "--chdir", str(self.repo)]
        return args + BASH

    def _apply_rlimits(self) -> None:
        mib = 1024 * 1024
        limits = self.limits
        for kind, value in (
            (resource.RLIMIT_AS, limits.memory_mb * mib),
            (resource.RLIMIT_NPROC, limits.pids),
            (resource.RLIMIT_FSIZE, limits.file_size_mb * mib),
        ):
            resource.setrlimit(kind, (value, value))

    def _start_transport(self) -> ProcessTransport:
        return ProcessTransport(
            self.argv(),
            cwd=self.repo,
            env=scrubbed_environment(),
            stderr_path=self.control_dir / "shell.log",
            preexec=self._apply_rlimits,
        )


@functools.cache
def bwrap_available() -> bool:
    """bwrap is installed and can create its namespaces here (some containers forbid that)."""
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "true"],
        capture_output=True,
        timeout=10,
    )
    return probe.returncode == 0
