"""Harbor-format tasks through `agentcli eval`: the task's own image, the agent in it, its verifier's reward."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.eval.harbor_spec import read_spec
from agentcli.sandbox.factory import docker_ready
from tests.test_solve import agentcli

HARBOR = Path(__file__).resolve().parent.parent / "benchmarks" / "harbor"
needs_docker = [pytest.mark.docker, pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")]


def results(path: Path) -> dict[str, dict]:
    return {r["task"]: r for r in json.loads(path.read_text())["tasks"]}


def harbor_containers() -> list[str]:
    listing = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "name=agentcli-harbor-"], capture_output=True, text=True
    )
    return listing.stdout.split()


def test_task_toml_settings_are_read(tmp_path: Path):
    task = tmp_path / "t"
    shutil.copytree(HARBOR / "greeting-punctuation", task)
    spec, problems = read_spec(task)
    assert problems == [] and (spec.agent_timeout, spec.verifier_timeout, spec.cpus, spec.memory_mb) == (
        240,
        60,
        1,
        1024,
    )
    (task / "task.toml").write_text('[environment]\nmemory = "2.5G"\nallow_internet = true\n')
    spec, _ = read_spec(task)
    assert spec.memory_mb == 2560 and spec.allow_internet and spec.agent_timeout is None
    (task / "task.toml").write_text('[environment]\nmemory = "lots"\n')
    assert "not a size" in read_spec(task)[1][0]


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_the_oracle_passes_and_doing_nothing_fails(tmp_path: Path, _):
    for flag, reward in (("--oracle", 1), ("--noop", 0)):
        out = tmp_path / f"{flag[2:]}.json"
        proc = agentcli("eval", str(HARBOR), flag, "--out", str(out), cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert {task: r["reward"] for task, r in results(out).items()} == {
            "greeting-punctuation": reward,
            "sum-amounts": reward,
        }
    assert harbor_containers() == []


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_a_scripted_agent_works_in_the_task_image_and_gets_a_share(tmp_path: Path, write_replies, _):
    fix = "sed -i 's/Hello world/Hello, world!/' greet.py && python3 greet.py && pwd"
    half = "awk -F, 'NR > 1 { s += $3 } END { print s }' sales.csv > total.txt && cat total.txt && pwd"
    for task, command, reward in (("greeting-punctuation", fix, 1), ("sum-amounts", half, 0.5)):
        model = write_replies([f"```bash\n{command}\n```", "DONE: done."])
        out = tmp_path / f"{task}.json"
        args = ["--tasks", task, "--model", model, "--out", str(out), "--trajectory-format", "atif"]
        proc = agentcli("eval", str(HARBOR), *args, cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        result = results(out)[task]
        assert result["reward"] == reward and result["status"] == ("passed" if reward == 1 else "failed")
        atif = json.loads((Path(result["trajectory"]) / "trajectory.atif.json").read_text())
        output = next(s for s in atif["steps"] if "tool_calls" in s)["observation"]["results"][0]["content"]
        assert output.rstrip().endswith("/app")  # the agent worked where the image's WORKDIR is
    summary = json.loads((tmp_path / "sum-amounts.json").read_text())["summary"]
    assert summary["mean_reward"] == 0.5 and summary["solved"] == 0
    assert harbor_containers() == []


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_malformed_harbor_tasks_are_their_own_errors(tmp_path: Path, _):
    suite = tmp_path / "suite"
    for name in ("good", "no-dockerfile", "not-executable", "does-not-build"):
        shutil.copytree(HARBOR / "greeting-punctuation", suite / name)
    (suite / "no-dockerfile" / "environment" / "Dockerfile").unlink()
    (suite / "not-executable" / "tests" / "test.sh").chmod(0o644)
    (suite / "does-not-build" / "environment" / "Dockerfile").write_text("FROM agentcli-sandbox:latest\nRUN exit 7\n")
    out = tmp_path / "r.json"
    proc = agentcli("eval", str(suite), "--oracle", "--out", str(out), cwd=tmp_path, timeout=600)
    assert "Traceback" not in proc.stderr
    got = results(out)
    assert got["good"]["reward"] == 1
    assert "missing environment/Dockerfile" in got["no-dockerfile"]["reason"]
    assert "tests/test.sh is not executable" in got["not-executable"]["reason"]
    assert "does not build" in got["does-not-build"]["reason"] and got["does-not-build"]["status"] == "error"


TERMINAL_BENCH = HARBOR.parent / "terminal-bench"


def test_the_older_terminal_bench_layout_is_read(tmp_path: Path):
    from agentcli.eval.tasks import load_task

    task = load_task(TERMINAL_BENCH / "mean-of-numbers")
    assert task.problem == "" and task.harbor is not None and task.harbor.layout == "terminal-bench"
    assert task.instruction.startswith("`python3 stats.py numbers.txt`") and task.category == "bugfix"
    assert (task.harbor.agent_timeout, task.harbor.verifier_timeout) == (300, 60)
    broken = tmp_path / "broken"
    shutil.copytree(TERMINAL_BENCH / "mean-of-numbers", broken)
    (broken / "task.yaml").write_text("difficulty: easy\nmax_agent_timeout_sec: soon\n")
    (broken / "run-tests.sh").unlink()
    problems = load_task(broken).problem
    assert "missing run-tests.sh" in problems and "no instruction" in problems and "soon" in problems


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_docker, id="docker")])
def test_older_layout_tasks_run_and_are_scored_by_their_pytest_summary(tmp_path: Path, _):
    for flag, reward, passed in (("--oracle", 1, 2), ("--noop", 0, 0)):
        out = tmp_path / f"{flag[2:]}.json"
        proc = agentcli("eval", str(TERMINAL_BENCH), flag, "--out", str(out), cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        task = results(out)["mean-of-numbers"]
        assert (task["reward"], task["tests_passed"], task["tests_total"]) == (reward, passed, 2), task
        assert (task["test_exit_code"] == 0) == (reward == 1)
    assert "PASSED" in (tmp_path / "oracle-trajectories" / "mean-of-numbers" / "verifier.log").read_text()
    assert harbor_containers() == []
