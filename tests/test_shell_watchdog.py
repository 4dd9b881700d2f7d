"""The persistent shell's watchdog and saved state, on every backend: interrupts, removals, clean close."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt


def test_interrupt_stops_the_command_and_keeps_the_shell(sandbox):
    sandbox.run("export KEEP=kept; cd /")
    previous = signal.signal(signal.SIGALRM, _raise_keyboard_interrupt)
    started = time.monotonic()
    try:
        signal.alarm(1)
        with pytest.raises(KeyboardInterrupt):
            sandbox.run("sleep 41.5 & sleep 41.5", timeout=60)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 5  # SIGINT through the watchdog, not a 5 s wait and a restart
    after = sandbox.run("echo $KEEP; pwd; pgrep -f 'sleep 41.5' | wc -l")
    assert after.output.split() == ["kept", "/", "0"]
    assert sandbox.shell.restarts == 0


def test_removed_variables_functions_and_aliases_stay_removed(sandbox):
    sandbox.run("COUNT=3; export SHOWN=1; greet() { echo hi; }; shopt -s expand_aliases; alias ll='ls -l'")
    assert sandbox.run("echo $COUNT $SHOWN; greet; alias ll").exit_code == 0
    sandbox.run("unset COUNT SHOWN; unset -f greet; unalias ll")
    obs = sandbox.run('echo "[$COUNT][$SHOWN]"; type greet; alias ll')
    assert obs.output.splitlines()[0] == "[][]"
    assert "not found" in obs.output and obs.exit_code != 0


def test_unexported_variable_is_not_in_the_environment(sandbox):
    sandbox.run("LOCAL_ONLY=1; export EXPORTED=2")
    obs = sandbox.run("echo $LOCAL_ONLY; env | grep -E '^(LOCAL_ONLY|EXPORTED)=' | sort")
    assert obs.output.splitlines() == ["1", "EXPORTED=2"]


def test_helpers_are_invisible_to_commands(sandbox):
    obs = sandbox.run('echo "[$1][$cmd][$pid][$#]"; declare -F | grep -c __ac_ || true')
    assert obs.output.splitlines()[0] == "[][][][0]"


def test_state_survives_a_command_that_fails_or_is_killed(sandbox):
    sandbox.run("cd / && export STAY=1")
    sandbox.run("cd /tmp; export GONE=1; kill -9 $BASHPID")
    assert sandbox.run('pwd; echo "$STAY[$GONE]"').output.split() == ["/", "1[]"]


def _holders(fifo: tuple[int, int]) -> set[int]:
    """Processes that have the FIFO (device, inode) open; by inode, as a container sees other paths."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                st = os.stat(fd)
                if (st.st_dev, st.st_ino) == fifo:
                    found.add(int(entry.name))
                    break
        except OSError:
            continue
    return found


def test_close_leaves_no_process_behind(sandbox_factory):
    box = sandbox_factory()
    box.start()
    st = os.stat(box.control_dir / box.shell._fifo)
    fifo = (st.st_dev, st.st_ino)
    box.run("sleep 42.25 &")
    assert len(_holders(fifo)) >= 3, "this process, the shell and its watchdog hold the FIFO"
    box.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_holders(fifo) or _pgrep("sleep 42.25")):
        time.sleep(0.1)
    assert not _holders(fifo)
    assert not _pgrep("sleep 42.25")


def _pgrep(pattern: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
