"""`agentcli` with `--sandbox docker`, as a user runs it: ownership, signals, orphans, bad input.

The engine is asked, by label, which containers exist; none may outlive its run, even one killed
with SIGKILL (the container ends with the stdin agentcli holds), and a stray one of a dead owner is
removed by the next run.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from tests.conftest import FIX_REPLIES
from tests.test_solve import _environment, agentcli

needs_docker = [pytest.mark.docker, pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")]


def containers_owned_by(pid: int) -> list[dict]:
    import docker

    client = docker.from_env()
    try:
        return client.api.containers(all=True, filters={"label": f"org.agentcli.owner-pid={pid}"})
    finally:
        client.close()


def wait_for(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def start_agentcli(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(cwd, {}),
    )


def descendants(pid: int) -> list[int]:
    """Processes whose parent chain reaches `pid` (by /proc; the tree outlives nothing here)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_solve_in_docker_fixes_the_repo_and_files_belong_to_the_user(failing_repo: Path, write_replies, _):
    replies = [FIX_REPLIES[0], FIX_REPLIES[1], "```bash\nmkdir -p made && echo note > made/by-agent.txt\n```"]
    replies += FIX_REPLIES[2:]
    result = agentcli(
        "solve", "fix the failing test", "--model", write_replies(replies), "--sandbox", "docker", cwd=failing_repo
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "1 passed" in result.stdout
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    for made in ("made", "made/by-agent.txt", "calc.py"):
        st = (failing_repo / made).stat()
        assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid()), made
    assert not list((failing_repo).rglob("__pycache__"))  # no bytecode litter from the container's python


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
@pytest.mark.skipif(os.geteuid() != 0, reason="giving the directory to another uid needs root")
def test_commands_run_as_the_directory_owner(tmp_path: Path, write_replies, _):
    """Run by root in a directory owned by someone else: the agent's files are that user's."""
    plain = tmp_path / "plain"
    plain.mkdir()
    os.chown(plain, 4321, 4322)
    replies = ["```bash\nid -u; id -g; whoami; echo made > out.txt; cat out.txt\n```", "DONE: wrote out.txt"]
    result = agentcli(
        "solve", "x", "--no-git", "--sandbox", "docker", "--model", write_replies(replies), "--json", cwd=plain
    )
    assert result.returncode == 0, result.stderr
    finished = next(e for e in map(json.loads, result.stdout.splitlines()) if e["type"] == "command_finished")
    uid, gid, name = finished["output"].split()[:3]
    assert (uid, gid) == ("4321", "4322") and name  # whoami knows the user
    st = (plain / "out.txt").stat()
    assert (st.st_uid, st.st_gid) == (4321, 4322)


@pytest.mark.parametrize(
    "signum",
    [
        pytest.param(signal.SIGTERM, marks=needs_docker, id="SIGTERM"),
        pytest.param(signal.SIGINT, marks=needs_docker, id="SIGINT"),
    ],
)
def test_signal_during_a_run_leaves_no_container_and_no_process(failing_repo: Path, write_replies, signum):
    replies = ["```bash\nsleep 120.5\n```", "DONE: slept"]
    proc = start_agentcli("solve", "x", "--model", write_replies(replies), "--sandbox", "docker", cwd=failing_repo)
    try:
        assert wait_for(lambda: containers_owned_by(proc.pid)), "the run's container appears"
        assert wait_for(
            lambda: b"sleep 120.5" in subprocess.run(["pgrep", "-af", "sleep 120.5"], capture_output=True).stdout
        )
        listing = agentcli("sandbox", "ls", cwd=failing_repo)
        assert f"{proc.pid} alive" in listing.stdout
        children = descendants(proc.pid)
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, proc.stderr.read()
    assert containers_owned_by(proc.pid) == []
    assert wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in children), 10)
    assert subprocess.run(["pgrep", "-f", "sleep 120.5"], capture_output=True).stdout == b""


def _orphan(owner_pid: int) -> str:
    """A container labelled as agentcli's, whose owner (a process that has ended) left it running:
    what a crash before the lifeline existed, or another engine client, would leave."""
    import docker

    from agentcli.sandbox.containers import owner_labels
    from agentcli.sandbox.images import image_tag

    labels = {**owner_labels("orphan-test"), "org.agentcli.owner-pid": str(owner_pid)}
    client = docker.from_env()
    try:
        created = client.api.create_container(image_tag(), command=["sleep", "300"], labels=labels)
        client.api.start(created["Id"])
        return created["Id"]
    finally:
        client.close()


def _ended_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_a_killed_runs_container_goes_with_it_and_strays_are_removed_by_the_next_run(
    failing_repo: Path, write_replies, _
):
    proc = start_agentcli(
        "solve", "x", "--model", write_replies(["```bash\nsleep 120.75\n```"]), "--sandbox", "docker", cwd=failing_repo
    )
    try:
        # Killed once its container runs: one killed in the split second between its creation and its
        # start is a stray the next run removes (below).
        assert wait_for(lambda: any(c["State"] == "running" for c in containers_owned_by(proc.pid)))
    finally:
        proc.kill()
        proc.wait()
    # SIGKILL: nobody could clean up, but the engine closed the container's stdin and it ended.
    assert wait_for(lambda: not containers_owned_by(proc.pid), seconds=10)
    dead = _ended_pid()
    _orphan(dead)
    listing = agentcli("sandbox", "ls", cwd=failing_repo)
    assert f"{dead} dead" in listing.stdout
    result = agentcli(
        "solve",
        "x",
        "--model",
        write_replies(
            [
                "```bash\necho x > note.txt && cat note.txt\n```",
                "DONE: wrote a note",
                "DONE: the failing test is not mine",
            ]
        ),
        "--sandbox",
        "docker",
        cwd=failing_repo,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"removed \d+ sandbox container", result.stdout + result.stderr)
    assert containers_owned_by(dead) == []


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_prune_removes_orphans_only(failing_repo: Path, write_replies, _):
    proc = start_agentcli(
        "solve", "x", "--model", write_replies(["```bash\nsleep 120.25\n```"]), "--sandbox", "docker", cwd=failing_repo
    )
    dead = _ended_pid()
    try:
        assert wait_for(lambda: containers_owned_by(proc.pid))
        _orphan(dead)
        pruned = agentcli("sandbox", "prune", cwd=failing_repo)
        assert pruned.returncode == 0 and re.search(r"[1-9]\d* container\(s\) removed", pruned.stderr)
        assert containers_owned_by(proc.pid)  # its owner lives: kept
        assert containers_owned_by(dead) == []
    finally:
        proc.kill()
        proc.wait()
    assert wait_for(lambda: not containers_owned_by(proc.pid), seconds=10)


def test_unreachable_engine_is_one_line_exit_3(failing_repo: Path):
    result = agentcli(
        "solve", "x", "--sandbox", "docker", cwd=failing_repo, env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    )
    assert result.returncode == 3
    assert result.stderr.strip().splitlines() == [
        "agentcli: Docker engine not reachable: start Docker or use --sandbox bwrap"
    ] or result.stderr.strip().endswith("Docker engine not reachable: start Docker or use --sandbox bwrap")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "flags", [["--memory", "0"], ["--cpus", "-1"], ["--pids", "0"], ["--memory", "lots"]], ids=lambda f: " ".join(f)
)
def test_invalid_limits_are_exit_2(failing_repo: Path, flags: list[str]):
    result = agentcli("solve", "x", "--sandbox", "docker", *flags, cwd=failing_repo)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert any(word in result.stderr for word in ("must be positive", "Invalid value")), result.stderr


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_missing_image_and_image_without_bash_are_one_line_errors(failing_repo: Path, write_replies, _):
    import docker

    replies = write_replies(["DONE: nothing"])
    missing = agentcli(
        "solve", "x", "--sandbox", "docker", "--image", "agentcli-test/absent:1", "--model", replies, cwd=failing_repo
    )
    assert missing.returncode == 3 and "not available locally" in missing.stderr + missing.stdout
    assert "Traceback" not in missing.stderr

    payload = io.BytesIO()
    with tarfile.open(fileobj=payload, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"hi\n"))
    client = docker.from_env()
    client.api.import_image_from_data(payload.getvalue(), repository="agentcli-test/nobash", tag="1")
    try:
        nobash = agentcli(
            "solve",
            "x",
            "--sandbox",
            "docker",
            "--image",
            "agentcli-test/nobash:1",
            "--model",
            replies,
            "--json",
            cwd=failing_repo,
        )
        assert nobash.returncode == 3, nobash.stderr + nobash.stdout
        assert "needs an image with bash" in json.loads(nobash.stdout.splitlines()[-1])["reason"]
        assert "Traceback" not in nobash.stderr
        leftovers = client.api.containers(all=True, filters={"ancestor": "agentcli-test/nobash:1"})
        assert leftovers == []
    finally:
        client.api.remove_image("agentcli-test/nobash:1", force=True)
        client.close()
