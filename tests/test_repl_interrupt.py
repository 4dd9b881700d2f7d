"""Ctrl-C during a command: the command's process group stops, the sandbox shell and its state live on."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.events import EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for


def ctrl_c_after(seconds: float) -> threading.Timer:
    """SIGINT to this process, as a terminal sends it on Ctrl-C."""
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def running(marker: str) -> list[str]:
    """Command lines of live processes that contain `marker`."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(cmdline)
    return found


def test_ctrl_c_stops_the_command_and_keeps_the_shell(sandbox):
    sandbox.run("mkdir -p sub && cd sub && export KEPT=yes")
    ctrl_c_after(0.5)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sandbox.run("sleep 31.5; echo not-reached", timeout=60)
    assert time.monotonic() - started < 4  # SIGINT ends sleep at once; SIGKILL would follow in 2 s
    assert getattr(sandbox.shell, "restarts", 0) == 0  # the same shell, not a new one
    after = sandbox.run('echo "$KEPT $(basename "$PWD")"')
    assert after.output == "yes sub\n" and after.exit_code == 0
    assert not any("sleep 31.5" in cmd for cmd in running("sleep 31.5"))


def test_a_command_that_ignores_sigint_is_killed(sandbox):
    ctrl_c_after(0.5)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sandbox.run("trap '' INT; sleep 32.5", timeout=0)  # no timeout: only the interrupt can stop it
    assert time.monotonic() - started < 6
    assert sandbox.run("echo alive").output == "alive\n"
    assert running("sleep 32.5") == []


def test_interrupted_command_leaves_a_note_and_the_next_task_goes_on(tmp_path: Path):
    model = ScriptedModel(["```bash\nsleep 33.5\n```", "```bash\necho next\n```", "DONE: ok", "DONE: ok"])
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        agent = Agent(model, box, EventBus())
        ctrl_c_after(0.5)
        with pytest.raises(KeyboardInterrupt):
            agent.run("wait")
        assert agent.ctx.context.prompt()[-1]["content"] == "[interrupted by the user before the command finished]"
        outcome = agent.continue_with("now something else")
    assert outcome.status == "finished"
    follow_up = [m["content"] for m in model.calls[1]]  # what the model saw for the next task
    assert "[interrupted by the user before the command finished]" in follow_up
    assert any("now something else" in text for text in follow_up)
