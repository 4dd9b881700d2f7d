"""Sandboxes that run bash as a local process: `host` (no isolation) and `bwrap` (bubblewrap).

bwrap builds the sandbox's filesystem from an allowlist: the system directories read-only, empty
tmpfs for the home directory, /tmp, /run and /dev/shm, the repository and the control channel
writable; nothing else of the host (other homes, /root, /mnt, /var, sockets under /run) exists inside.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agentcli import untrusted
from agentcli.lifeline import set_parent_death_signal
from agentcli.sandbox import seccomp
from agentcli.sandbox.base import CHANNEL_INSIDE, Observation, SandboxUnavailable, repo_relative
from agentcli.sandbox.environment import scrubbed_environment
from agentcli.sandbox.freeze import stopped_tree
from agentcli.sandbox.gitmounts import git_mounts
from agentcli.sandbox.shell import DEFAULT_OUTPUT_LIMIT, PersistentShell, ProcessTransport

BASH = ["bash", "--noprofile", "--norc"]
# The host directories bwrap shows, read-only, where they exist; one that is a link on the host (as
# /bin -> usr/bin on a merged-/usr system) is recreated as the same link.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Secrets under /etc that bwrap hides where they exist: a folder behind an empty read-only tmpfs, a
# file behind /dev/null.
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/docker",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/letsencrypt",
    "/etc/security/opasswd",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
    "/etc/openvpn",
    "/etc/ipsec.secrets",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/mysql/debian.cnf",
)
# Toolchains on PATH under $HOME (~/.pyenv, ~/.cargo, ~/.nvm) are shown read-only, as their top folder
# under $HOME; never these, which hold credentials, and never these files inside the ones shown.
CREDENTIAL_HOMES = (".ssh", ".aws", ".gnupg", ".config", ".docker", ".kube", ".azure", ".password-store", ".netrc")
TOOLCHAIN_SECRETS = (".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings")
MIB = 1024 * 1024
# Sizes of bwrap's writable tmpfs mounts (Docker's /tmp and home are as large, its /dev/shm as small).
TMP_SIZE = 512 * MIB
HOME_SIZE = 512 * MIB
SHM_SIZE = 64 * MIB


@dataclass
class Limits:
    """Resource limits for one sandbox session."""

    memory_mb: int = 4096
    pids: int = 512
    cpus: float = 2.0
    file_size_mb: int = 2048
    network: bool = False


class ShellSandbox:
    """A sandbox that shares the repository's path with the host and drives a `PersistentShell`.

    `control_dir` is the control channel, outside the repository; its parent is agentcli's own (the
    sandbox never sees it), and holds the shell's log.
    """

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
        if control_dir.resolve().is_relative_to(self.repo):
            raise ValueError(f"the control channel must be outside the repository, not {control_dir}")
        self.control_dir = control_dir
        self.private_dir = control_dir.parent
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

    def _file_owner(self) -> tuple[int, int] | None:
        """Who files agentcli writes for the sandbox belong to (None: whoever runs agentcli)."""
        return None

    def read_file(self, path: str) -> str:
        """A file's text as the sandbox sees it. In the repository and the control channel a link or a
        FIFO is refused (`untrusted.NotAFile`), never followed; elsewhere the sandbox itself reads it."""
        if (relative := repo_relative(self.workdir, path)) is not None:
            return untrusted.read_text(self.repo, relative)
        if (name := repo_relative(self.shell.control_inside, path)) is not None:
            return untrusted.read_text(self.control_dir, name)
        return self._read_outside(path)

    def write_file(self, path: str, content: str) -> None:
        if (relative := repo_relative(self.workdir, path)) is not None:
            untrusted.write_text(self.repo, relative, content, owner=self._file_owner())
            return
        # Elsewhere the sandbox's own shell writes it, from a file handed over through the channel.
        name = f"write-{secrets.token_hex(6)}"
        self.shell.channel.create(name, content.encode())
        try:
            inside = shlex.quote(f"{self.shell.control_inside}/{name}")
            obs = self.shell.run(f"cat -- {inside} > {shlex.quote(path)}", timeout=30)
        finally:
            self.shell.channel.remove(name)
        if obs.exit_code != 0:
            raise OSError(obs.output.strip()[:200] or f"cannot write {path}")

    def _read_outside(self, path: str) -> str:
        """A file outside the repository, read by the sandbox's own shell (it sees its own filesystem)."""
        obs = self.shell.run(f"cat -- {shlex.quote(path)}", timeout=30)
        if obs.exit_code != 0 or obs.output_path is None:
            if "No such file" in obs.output:
                raise FileNotFoundError(path)
            raise OSError(obs.output.strip()[:200] or f"cannot read {path}")
        return self.read_file(obs.output_path)

    def frozen(self) -> contextlib.AbstractContextManager[None]:
        """Every process the shell started stopped for the block. Under bwrap that is every process in
        the sandbox (its own process namespace); on the host, one that left the shell's process tree
        (`setsid`) is not stopped: the host backend isolates nothing."""
        return stopped_tree(self.shell.process_id())

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
            stderr_path=self.private_dir / "shell.log",
            # No namespace ends the shell with agentcli here: SIGHUP does, and the shell stops its command.
            preexec=lambda: set_parent_death_signal(signal.SIGHUP),
        )


class BwrapSandbox(ShellSandbox):
    """bubblewrap: an allowlisted filesystem, no network, its own namespaces, a seccomp filter, rlimits.

    Visible: the system directories (`SYSTEM_DIRS`) read-only with the secrets of /etc hidden, the
    repository and the control channel writable, and empty sized tmpfs mounts at $HOME, /tmp and
    /dev/shm; /run is an empty read-only tmpfs holding the control channel (and, with the network,
    systemd-resolved's resolv.conf). No capabilities, and system calls that reach the kernel or other
    processes are denied (`seccomp.py`). Limits on memory, processes and file size are rlimits.
    """

    name = "bwrap"

    def _scratch(self) -> str | None:
        return "/tmp/.agentcli-shell"  # /tmp is the sandbox's own tmpfs

    def _inside(self, path: Path) -> str:
        return CHANNEL_INSIDE

    def __init__(self, *args, **kwargs):
        if not bwrap_available():
            raise SandboxUnavailable("bubblewrap is not usable here: install it (apt-get install bubblewrap)")
        super().__init__(*args, **kwargs)

    def argv(self, seccomp_fd: int | None = None) -> list[str]:
        """The bwrap command line; `seccomp_fd`: a file descriptor, open in bwrap, holding the filter."""
        args = ["bwrap"]
        for directory in SYSTEM_DIRS:
            if os.path.islink(directory):
                args += ["--symlink", os.readlink(directory), directory]
            elif os.path.isdir(directory):
                args += ["--ro-bind", directory, directory]
        for secret in ETC_SECRETS:
            if os.path.isdir(secret):
                args += ["--tmpfs", secret, "--remount-ro", secret]
            elif os.path.lexists(secret):
                args += ["--ro-bind", "/dev/null", secret]
        args += ["--dev", "/dev", "--size", str(SHM_SIZE), "--tmpfs", "/dev/shm", "--proc", "/proc"]
        args += ["--tmpfs", "/run", "--bind", str(self.control_dir.resolve()), self._inside(self.control_dir)]
        resolv = Path("/etc/resolv.conf").resolve()
        if self.limits.network and resolv.is_relative_to("/run") and resolv.is_file():
            args += ["--ro-bind", str(resolv), str(resolv)]  # systemd-resolved's file, under the host's /run
        args += ["--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
        home = Path.home()
        if home != Path("/"):
            args += ["--size", str(HOME_SIZE), "--tmpfs", str(home)]
            toolchains = home_toolchains(home, os.environ.get("PATH", ""))
            for toolchain in toolchains:
                args += ["--ro-bind", str(toolchain), str(toolchain)]
            for secret in (home / name for name in TOOLCHAIN_SECRETS):
                if any(secret.is_relative_to(t) for t in toolchains) and os.path.lexists(secret):
                    args += ["--tmpfs", str(secret)] if secret.is_dir() else ["--ro-bind", "/dev/null", str(secret)]
        # After the tmpfs mounts, so that a repository under $HOME, /tmp or /run shows through them; /run
        # is made read-only last, as bwrap creates the mount points in it (the mounts stay writable).
        args += ["--bind", str(self.repo), str(self.repo)]
        protected = git_mounts(self.repo)
        for path in protected.writable:
            args += ["--bind", str(path), str(path)]
        for path in protected.read_only:
            args += ["--ro-bind", str(path), str(path)]
        args += ["--remount-ro", "/run"]
        args += ["--unshare-all"] + (["--share-net"] if self.limits.network else [])
        args += ["--cap-drop", "ALL", "--die-with-parent", "--new-session", "--chdir", str(self.repo)]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        return args + BASH

    def _apply_rlimits(self) -> None:
        limits = self.limits
        for kind, value in (
            (resource.RLIMIT_AS, limits.memory_mb * MIB),
            (resource.RLIMIT_NPROC, limits.pids),
            (resource.RLIMIT_FSIZE, limits.file_size_mb * MIB),
        ):
            resource.setrlimit(kind, (value, value))

    def _environment(self) -> dict[str, str]:
        env = scrubbed_environment()
        for name in ("TMPDIR", "XDG_RUNTIME_DIR"):  # host folders that do not exist inside
            env.pop(name, None)
        return {**env, "HOME": str(Path.home())}

    def _start_transport(self) -> ProcessTransport:
        # bwrap reads the filter from the descriptor when it starts; each shell gets a fresh one.
        seccomp_fd = seccomp.filter_fd()
        try:
            return ProcessTransport(
                self.argv(seccomp_fd),
                cwd=self.repo,
                env=self._environment(),
                stderr_path=self.private_dir / "shell.log",
                preexec=self._apply_rlimits,
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)


def home_toolchains(home: Path, path: str) -> list[Path]:
    """The folders under `home` that hold the toolchains on `path` (`~/.pyenv` for `~/.pyenv/shims`):
    each PATH entry's top folder under $HOME, but only `bin/` and `lib/` of `~/.local`, and none that
    holds credentials."""
    found: list[Path] = []
    for entry in path.split(":"):
        try:
            parts = Path(entry).resolve().relative_to(home.resolve()).parts
        except (ValueError, OSError):
            continue
        if not parts or parts[0] in CREDENTIAL_HOMES:
            continue
        folders = [home / ".local" / "bin", home / ".local" / "lib"] if parts[0] == ".local" else [home / parts[0]]
        found += [f for f in folders if f.is_dir() and f not in found]
    return found


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
