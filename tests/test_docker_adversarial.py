"""Hostile commands in the Docker sandbox: each is contained, the session stays usable, the host unharmed.

Every test ends by asking the engine that no container of its session remains.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from agentcli.sandbox.local import Limits
from tests.conftest import containers_of_session

pytestmark = [pytest.mark.docker, pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")]


@pytest.fixture
def docker_box(tmp_path: Path):
    """Start a Docker sandbox (limits as given); close it after the test and check the engine kept nothing."""
    from agentcli.sandbox.docker import DockerSandbox

    made = []

    def make(**limits) -> DockerSandbox:
        repo = tmp_path / f"repo{len(made)}"
        repo.mkdir()
        box = DockerSandbox(
            repo,
            tmp_path / "state" / "sessions" / f"adv-{os.getpid()}-{len(made)}" / "commands",
            limits=Limits(**limits),
        )
        made.append(box)
        box.start()
        return box

    yield make
    for box in made:
        box.close()
        assert containers_of_session(box.session_id) == [], "a container of this test was left behind"


def usable(box) -> None:
    obs = box.run("echo ok", timeout=30)
    assert obs.exit_code == 0 and obs.output == "ok\n", obs


def host_can_fork() -> bool:
    return subprocess.run(["true"]).returncode == 0


def wait_for(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def host_processes(pattern: str) -> list[str]:
    """Host pids whose command line matches (the host sees the container's processes too)."""
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def test_fork_bomb_hits_the_pids_limit_and_dies_with_its_timeout(docker_box):
    box = docker_box(pids=128, cpus=1.0)
    started = time.monotonic()
    obs = box.run("bomb() { bomb | bomb & }; bomb; sleep 30", timeout=4)
    assert obs.timed_out and time.monotonic() - started < 15
    assert host_can_fork()
    usable(box)
    count = box.run("ps -e --no-headers | wc -l").output.strip()
    assert int(count) < 10, f"the bomb's processes are gone: {count} left"


def test_memory_hog_is_reported_as_out_of_memory(docker_box):
    box = docker_box(memory_mb=256)
    obs = box.run("python3 -c 'x = bytearray(1 << 30); print(len(x))'", timeout=60)
    assert obs.exit_code == 137
    assert obs.killed_reason == "killed: out of memory (limit 256 MiB)"
    # A hog inside a longer command is reported too, though the command's own status is 0.
    obs = box.run("python3 -c 'bytearray(1 << 30)'; echo after", timeout=60)
    assert obs.exit_code == 0 and "after" in obs.output
    assert obs.killed_reason == "killed: out of memory (limit 256 MiB)"
    usable(box)
    assert box.run("echo fine").killed_reason is None


def test_a_gigabyte_of_output_is_cut_for_the_model_and_memory_stays_flat(docker_box):
    box = docker_box()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    obs = box.run("yes 0123456789abcdef | head -c 1000000000", timeout=300)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        assert obs.exit_code == 0 and obs.total_bytes == 1_000_000_000
        assert obs.truncated and len(obs.output) < 10_000
        assert (after - before) < 50_000  # KiB
        usable(box)
    finally:
        (box.repo / obs.output_path.removeprefix("/workspace/")).unlink(missing_ok=True)


def test_sleep_past_the_timeout_is_stopped(docker_box):
    box = docker_box()
    box.run("export KEEP=1")
    started = time.monotonic()
    obs = box.run("sleep 60.5", timeout=1)
    assert obs.timed_out and time.monotonic() - started < 6
    assert box.run("echo $KEEP; pgrep -c -f 'sleep 60.5' || true").output.split() == ["1", "0"]


def test_background_process_left_running_does_not_block_and_dies_with_the_container(docker_box):
    box = docker_box()
    started = time.monotonic()
    obs = box.run("sleep 300.25 >/dev/null 2>&1 & echo started")
    assert obs.output == "started\n" and time.monotonic() - started < 5
    usable(box)
    assert wait_for(lambda: host_processes("sleep 300.25"))  # the fork may not have run `sleep` yet
    box.close()
    assert wait_for(lambda: not host_processes("sleep 300.25"))


def test_process_ignoring_sigterm_is_killed(docker_box):
    box = docker_box()
    started = time.monotonic()
    obs = box.run("trap '' TERM; sleep 61.5 & trap '' TERM; sleep 61.5", timeout=1)
    assert obs.timed_out and time.monotonic() - started < 8
    assert box.run("pgrep -c -f 'sleep 61.5' || true").output.strip() == "0"
    usable(box)


def test_network_is_off_by_default(docker_box):
    box = docker_box()
    obs = box.run(
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=3)'; "
        "curl -sS --max-time 3 http://example.com; ls /sys/class/net",
        timeout=30,
    )
    assert "Network is unreachable" in obs.output
    assert obs.output.split()[-1] == "lo"  # no interface but loopback


def test_network_flag_gives_an_interface(docker_box):
    box = docker_box(network=True)
    names = box.run("ls /sys/class/net").output.split()
    assert "lo" in names and len(names) >= 2


def test_writes_outside_the_workspace_fail_and_nothing_is_privileged(docker_box):
    box = docker_box()
    obs = box.run("for p in /etc/x /usr/bin/x /x /root/x /var/x; do touch $p; done 2>&1", timeout=30)
    assert obs.output.count("Read-only file system") + obs.output.count("Permission denied") == 5, obs.output
    assert not Path("/x").exists() and not Path("/usr/bin/x").exists()
    caps = box.run("grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status").output.split()
    assert caps == ["CapEff:", "0000000000000000", "CapBnd:", "0000000000000000", "NoNewPrivs:", "1"]
    assert box.run("mount -t tmpfs none /mnt").exit_code != 0
    assert box.run("echo in > /workspace/inside.txt && echo tmp > /tmp/t && cat /tmp/t").output == "tmp\n"
    assert (box.repo / "inside.txt").read_text() == "in\n"
    usable(box)


def test_no_docker_socket_inside(docker_box):
    box = docker_box()
    obs = box.run(
        "ls -l /var/run/docker.sock /run/docker.sock; "
        "curl -sS --max-time 3 --unix-socket /var/run/docker.sock http://localhost/containers/json; "
        'echo "[$DOCKER_HOST]"',
        timeout=30,
    )
    assert obs.output.count("No such file or directory") >= 2
    assert obs.output.splitlines()[-1] == "[]"
    usable(box)


def test_host_secrets_are_not_visible(docker_box, monkeypatch):
    suffix = os.urandom(6).hex()
    secret = "s3cret-value-" + suffix
    monkeypatch.setenv("AGENTCLI_TEST_SECRET", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("HARMLESS_LOOKING", secret)
    box = docker_box()
    obs = box.run("env; cat /proc/self/environ; cat /proc/1/environ; grep -rs . /proc/*/environ", timeout=30)
    assert secret not in obs.output
    # The command spells the secret in two pieces, or its own script file would match.
    found = box.run(
        f'grep -rlsF "$(printf %s s3cret-value- {suffix})" /workspace /home /tmp /etc /run; true', timeout=60
    )
    assert found.output == "" and not found.timed_out
    usable(box)


def test_filling_tmp_stops_at_its_limit_and_the_shell_keeps_its_state(docker_box):
    box = docker_box()
    box.run("cd /tmp && export MARK=kept")
    obs = box.run("dd if=/dev/zero of=/tmp/fill bs=1M count=1024", timeout=120)
    assert obs.exit_code != 0 and "No space left on device" in obs.output
    after = box.run("pwd; echo $MARK; du -m /tmp/fill | cut -f1", timeout=30)
    lines = after.output.split()
    assert lines[:2] == ["/tmp", "kept"] and 500 <= int(lines[2]) <= 520
    assert not Path("/tmp/fill").exists()  # the host's /tmp is another place
    usable(box)
