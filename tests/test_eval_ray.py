"""`agentcli eval --ray`: rollouts as Ray tasks on a real local Ray cluster (a head on loopback with two
worker CPUs), records shipped back, a worker killed mid-rollout, nothing left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from tests.test_eval import SUITE, agentcli, replies

pytestmark = [pytest.mark.ray, pytest.mark.slow]

HARBOR = Path(__file__).resolve().parents[1] / "benchmarks" / "harbor"
SCRATCH = Path(tempfile.gettempdir()) / "agentcli-rollouts"


def _ray_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ray.scripts.scripts", *args],
        capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def cluster():
    """A Ray head on 127.0.0.1 with two CPUs (two rollouts at a time) and a Docker engine declared."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"Ray is not installed (pip install 'agentcli[ray]'): {exc}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay short
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    started = _ray_cli(
        "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
        """--resources={"docker": 2}""", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}",
        env=env,
    )  # fmt: skip
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _ray_cli("stop", "--force", env=env)
        shutil.rmtree(temp, ignore_errors=True)


def _rollout_workers() -> list[int]:
    """Ray workers running a rollout now (Ray titles a busy worker after its task)."""
    found = subprocess.run(["pgrep", "-f", "ray::_rollout"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def _scratch() -> set[str]:
    return {str(p) for p in SCRATCH.glob("*/*")} if SCRATCH.is_dir() else set()


def test_groups_of_rollouts_run_on_the_cluster(cluster: str, tmp_path: Path):
    out = tmp_path / "ray.json"
    before = _scratch()
    proc = agentcli(
        "eval", str(SUITE), "--oracle", "--tasks", "fix-off-by-one,json-to-csv", "--samples", "2",
        "--ray", cluster, "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "on Ray" in proc.stdout and "self-check (oracle): ok" in proc.stdout
    data = json.loads(out.read_text())
    assert [(t["task"], t["sample"], t["status"], t["attempts"]) for t in data["tasks"]] == [
        (task, i, "passed", 1) for task in ("fix-off-by-one", "json-to-csv") for i in range(2)
    ]
    for t in data["tasks"]:  # the records came back from the worker to the driver's folder
        record = Path(t["trajectory"])
        assert record.parent.parent == tmp_path / "ray-trajectories"
        assert (record / "junit.xml").is_file() and (record / "solution.log").is_file()
        assert "pass" in (record / "tests.log").read_text()
    assert _scratch() <= before


def test_a_worker_killed_mid_rollout_is_retried_and_marked(cluster: str, tmp_path: Path):
    model = replies(tmp_path, ["```bash\nsleep 8\n```", "DONE: waited."])
    out = tmp_path / "killed.json"
    before = _scratch()
    killed: list[int] = []

    def kill_the_first_worker() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            workers = _rollout_workers()
            if workers:
                time.sleep(4)  # well into the rollout: its agent is in `sleep 8`
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
                return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_the_first_worker)
    killer.start()
    proc = agentcli(
        "eval", str(SUITE), "--tasks", "fix-off-by-one", "--model", model, "--sandbox", "host",
        "--ray", cluster, "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    killer.join()
    assert killed, "no rollout worker was seen"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (task,) = json.loads(out.read_text())["tasks"]
    assert task["attempts"] == 2 and "Ray worker died" in task["reason"], task
    assert task["agent_status"] in ("finished", "failed") and task["status"] == "failed"  # it fixes nothing
    events = (Path(task["trajectory"]) / "session" / "events.jsonl").read_text()
    assert "sleep 8" in events
    # The killed attempt's agent stopped with its worker (its lifeline) and its scratch folder is gone.
    agents = subprocess.run(["pgrep", "-f", f"solve --task-file {SUITE}"], capture_output=True, text=True)
    assert agents.stdout.strip() == ""
    assert _scratch() <= before and not _rollout_workers()


def test_retries_have_a_limit(cluster: str, tmp_path: Path):
    model = replies(tmp_path, ["```bash\nsleep 30\n```", "DONE: waited."])
    out = tmp_path / "limit.json"
    stop = threading.Event()

    def kill_every_worker() -> None:
        while not stop.is_set():
            for pid in _rollout_workers():
                time.sleep(1.5)
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    killer = threading.Thread(target=kill_every_worker, daemon=True)
    killer.start()
    try:
        proc = agentcli(
            "eval", str(SUITE), "--tasks", "fix-off-by-one", "--model", model, "--sandbox", "host",
            "--ray", cluster, "--ray-retries", "1", "--out", str(out), cwd=tmp_path,
        )  # fmt: skip
    finally:
        stop.set()
        killer.join()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (task,) = json.loads(out.read_text())["tasks"]
    assert task["status"] == "error" and task["attempts"] == 2, task
    assert "its Ray worker died 2 times" in task["reason"]


@pytest.mark.docker
@pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")
def test_a_mixed_suite_runs_in_groups_on_nodes_with_docker(cluster: str, tmp_path: Path):
    """agentcli's own layout, Harbor's and the older Terminal-Bench one side by side, two samples each."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copytree(SUITE / "fix-off-by-one", suite / "fix-off-by-one")
    shutil.copytree(HARBOR / "greeting-punctuation", suite / "greeting-punctuation")
    shutil.copytree(HARBOR.parent / "terminal-bench" / "mean-of-numbers", suite / "mean-of-numbers")
    out = tmp_path / "mixed.json"
    proc = agentcli(
        "eval", str(suite), "--oracle", "--samples", "2", "--ray", cluster, "--out", str(out), cwd=tmp_path,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert {(t["task"], t["sample"], t["reward"]) for t in data["tasks"]} == {
        (task, i, 1) for task in ("fix-off-by-one", "greeting-punctuation", "mean-of-numbers") for i in range(2)
    }
    assert data["summary"]["pass_at_k"] == {"1": 1.0, "2": 1.0}


def test_an_unreachable_cluster_is_one_line_and_exit_3(tmp_path: Path):
    pytest.importorskip("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = agentcli("eval", str(SUITE), "--oracle", "--ray", f"127.0.0.1:{port}", cwd=tmp_path, timeout=180)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "cannot reach a Ray cluster" in proc.stderr and "Traceback" not in proc.stderr
