"""The persistent-shell driver every sandbox backend shares.

One long-lived bash per session reads one control line per command from its stdin. The command
text travels as a file in the control channel (`channel.py`), a folder outside the repository that
both sides see (the driver writes it through a directory file descriptor, the shell reads it at its
sandbox path); the command's interleaved stdout and stderr go to a file beside it, so output of any
size costs no memory here. The shell answers on its stdout with a
sentinel line that carries a per-session token and the exit code.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import select
import shlex
import signal
import subprocess
import time
from importlib import resources
from pathlib import Path
from typing import Protocol

from agentcli.sandbox.base import Observation
from agentcli.sandbox.channel import KEPT_OUTPUTS, Channel

DEFAULT_TIMEOUT = 120.0
# Beyond the command's own timeout, how long to wait for the shell before declaring it dead.
SHELL_GRACE = 15.0
# What the model sees of one output; the rest stays in the saved file.
DEFAULT_OUTPUT_LIMIT = 6000

_PARSE_ERROR = re.compile(r"/\d{4}\.sh: line \d+: (syntax error|unexpected EOF)")


class ShellTransport(Protocol):
    """A running bash: something to write control lines to and read sentinel lines from."""

    def write(self, data: bytes) -> None: ...

    def read_line(self, deadline: float) -> bytes | None:
        """The next line, b"" at end of stream, None when `deadline` (time.monotonic) passes."""
        ...

    def close(self) -> None: ...


class ProcessTransport:
    """A bash started as a local process (directly, or through a wrapper such as bwrap)."""

    def __init__(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], stderr_path: Path, preexec=None, pass_fds=()
    ):
        self._stderr = open(stderr_path, "ab")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=pass_fds,
        )
        self._buffer = b""

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_line(self, deadline: float) -> bytes | None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return b""
            self._buffer = bounded(self._buffer + chunk)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def close(self) -> None:
        """End the shell and every process of its session (commands run in process groups of their own)."""
        kill_session(self.proc.pid)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._stderr.close()


# The longest line kept from the shell's stdout before it ends: only its short sentinel lines matter,
# and a command that writes to the shell's own stdout must not make agentcli hold (and rescan) it all.
MAX_LINE = 1 << 20


def bounded(buffer: bytes) -> bytes:
    """`buffer`, cut to its tail when it holds no line end and has grown past MAX_LINE."""
    return buffer if len(buffer) <= MAX_LINE or b"\n" in buffer[-MAX_LINE:] else buffer[-4096:]


def kill_session(sid: int) -> None:
    """SIGKILL every process whose session id is `sid` (the shell started the session)."""
    targets = {sid}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == sid:
                targets.add(int(entry.name))
        except (ProcessLookupError, PermissionError):
            continue
    for pid in targets:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


class PersistentShell:
    """Runs commands one at a time in a long-lived bash, restarting it if it dies.

    `start_transport` starts a fresh bash; `control_host`/`control_inside` name the same directory
    as seen from here and from inside the sandbox.
    """

    def __init__(
        self,
        start_transport,
        control_host: Path,
        control_inside: str,
        *,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        scratch_inside: str | None = None,
        oom_note: str | None = None,
    ):
        """`scratch_inside`: a private directory for the shell's own files, best on a tmpfs (default:
        beside the commands). `oom_note`: inside a container with a memory cgroup, report kills by
        its OOM killer with this reason (e.g. "killed: out of memory (limit 4096 MiB)")."""
        self._start_transport = start_transport
        self.channel = Channel(control_host)
        self.control_inside = control_inside.rstrip("/")
        self.scratch_inside = (scratch_inside or f"{self.control_inside}/.shell").rstrip("/")
        self.output_limit = output_limit
        self.oom_note = oom_note
        self._token = secrets.token_hex(8)
        self._transport: ShellTransport | None = None
        self._count = 0
        self.restarts = 0
        self._fifo: str | None = None
        self._interrupt_fd: int | None = None

    def start(self) -> None:
        self.channel.open()
        self._launch()
        # A first round trip proves the shell is up and has read the bootstrap.
        probe = self.run("true", timeout=30)
        if probe.exit_code != 0:
            raise RuntimeError(f"the sandbox shell did not start: {probe.output.strip()[:200]}")

    def process_id(self) -> int | None:
        """The shell's process as the host numbers it (or its wrapper's, bwrap's), while it runs; None
        where it is no local process (a container's exec)."""
        proc = getattr(self._transport, "proc", None)
        return proc.pid if proc is not None else None

    def close(self) -> None:
        self._stop_watchdog()
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        self._close_fifo()
        self.channel.close()

    def run(self, command: str, timeout: float | None = None) -> Observation:
        if self._transport is None:
            raise RuntimeError("shell is not started")
        timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._count += 1
        cid = f"{self._count:04d}"
        # Files under this number from before (a killed go's, on resume; or planted) must not add to its
        # output: the command appends to `.out`, and `.timeout`/`.syntax` mark how it ended.
        self.channel.forget(self._count)
        self.channel.create(f"{cid}.sh", (command if command.endswith("\n") else command + "\n").encode())
        if self._count > KEPT_OUTPUTS:
            self.channel.forget(self._count - KEPT_OUTPUTS)
        seconds = max(1, math.ceil(timeout)) if timeout > 0 else 0
        ctl = self.control_inside
        sentinel = f"__AC_{self._token}_{cid}"
        check = 1 if "\n" in command.strip() else 0
        # The subshell is forked at top level so that the command sees none of the helpers' locals,
        # and without the watchdog's FIFO, which is not the command's business.
        script, out_inside = shlex.quote(f"{ctl}/{cid}.sh"), shlex.quote(f"{ctl}/{cid}.out")
        line = (
            f"__ac_pre {cid} {check} && {{ ( exec {{__ac_wdfd}}>&-; trap __ac_save EXIT; . {script}; ) "
            f"</dev/null >>{out_inside} 2>&1 & __ac_post {cid} {seconds} $!; }}; "
            '[ -z "$__ac_reload" ] || { __ac_forget; . "$__ac_tmp/state" 2>/dev/null; }; '
            f'builtin printf \'\\n{sentinel} %d %s\\n\' "$__ac_ec" "$__ac_flags"\n'
        )
        started = time.monotonic()
        deadline = started + (seconds or 86400 * 365) + SHELL_GRACE
        self._transport.write(line.encode())
        try:
            answer = self._await_sentinel(sentinel, deadline)
        except KeyboardInterrupt:
            self._interrupt(sentinel)
            raise
        duration = time.monotonic() - started
        killed_reason = None
        if answer is None:
            killed_reason = "the shell stopped answering and was restarted; cwd and variables were reset"
            self._restart()
            exit_code, flags = -1, ""
        else:
            exit_code, flags = answer
            if "oom" in flags.split(","):
                killed_reason = self.oom_note or "killed: out of memory"
        timed_out = self.channel.exists(f"{cid}.timeout")
        text, total, truncated = self.channel.read_head_tail(f"{cid}.out", self.output_limit)
        # Multi-line commands are checked with `bash -n` first; a single line that fails to parse never starts.
        syntax_error = self.channel.exists(f"{cid}.syntax") or (
            exit_code == 2 and _PARSE_ERROR.search(text) is not None
        )
        # bash names the command's file in its errors; say "bash" as an interactive shell would, so the
        # same error reads the same every time (stuck detection compares outputs).
        text = text.replace(f"{ctl}/{cid}.sh", "bash")
        return Observation(
            command=command,
            exit_code=exit_code,
            output=text,
            duration=duration,
            total_bytes=total,
            truncated=truncated,
            output_path=f"{ctl}/{cid}.out",
            timed_out=timed_out,
            syntax_error=syntax_error,
            killed_reason=killed_reason,
        )

    def _await_sentinel(self, sentinel: str, deadline: float) -> tuple[int, str] | None:
        """(exit code, flags) from the sentinel line; None if the shell died or the deadline passed."""
        assert self._transport is not None
        prefix = sentinel.encode() + b" "
        while True:
            line = self._transport.read_line(deadline)
            if line is None or line == b"":
                return None
            if line.startswith(prefix):
                code, _, flags = line[len(prefix) :].decode(errors="replace").strip().partition(" ")
                try:
                    return int(code), flags.strip()
                except ValueError:
                    return None

    def _launch(self) -> None:
        """Start a bash and send it the bootstrap, with a fresh watchdog FIFO."""
        self._open_fifo()
        self._transport = self._start_transport()
        fifo = f"{self.control_inside}/{self._fifo}" if self._fifo is not None else ""
        names = {
            "__AC_CTL__": self.control_inside,
            "__AC_TMP__": self.scratch_inside,
            "__AC_FIFO__": fifo,
            "__AC_OOM__": "1" if self.oom_note else "",
        }
        init = resources.files("agentcli.sandbox").joinpath("shell_init.sh").read_text()
        for name, value in names.items():
            init = init.replace(name, shlex.quote(value))
        self._transport.write(init.encode() + b"\n")

    def _open_fifo(self) -> None:
        # Each shell gets its own FIFO, so a watchdog left by a dead shell never reads the new one's lines.
        # Both sides open it read-write, so neither blocks and it never reaches end of file.
        self._close_fifo()
        name = f"watchdog.{self.restarts}"
        try:
            self._interrupt_fd = self.channel.make_fifo(name)
            self._fifo = name
        except OSError:
            self._fifo = None  # the shell then makes a private pipe; interrupts restart the shell instead

    def _stop_watchdog(self) -> None:
        """Tell the shell's watchdog to kill the running command, if any, and leave."""
        if self._interrupt_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._interrupt_fd, b"exit\n")

    def _close_fifo(self) -> None:
        if self._interrupt_fd is not None:
            os.close(self._interrupt_fd)
            self._interrupt_fd = None
        if self._fifo is not None:
            self.channel.remove(self._fifo)
            self._fifo = None

    def _interrupt(self, sentinel: str) -> None:
        """Ctrl-C: stop the running command's process group and keep the shell, or restart it."""
        try:
            if self._interrupt_fd is not None:
                with contextlib.suppress(OSError):
                    os.write(self._interrupt_fd, b"interrupt\n")
                # The watchdog sends SIGINT, then SIGKILL two seconds later; then the sentinel comes.
                if self._await_sentinel(sentinel, time.monotonic() + 5) is not None:
                    return
            self._restart()
        except KeyboardInterrupt:
            self._restart()

    def _restart(self) -> None:
        self._stop_watchdog()
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        self.restarts += 1
        self._launch()
