"""Groups of rollouts (`agentcli eval --samples N`): seeds, records, group statistics, resume; and the
lifeline that stops an eval's children when the eval is killed outright."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.eval.groups import advantages, group, ks_for, mean_pass_at_k, pass_at_k
from tests.test_eval import SUITE, agentcli, replies


def test_pass_at_k_is_the_unbiased_estimate():
    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 4, 2) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # C(3,3)/C(5,3)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
    assert ks_for(1) == [1] and ks_for(2) == [1, 2] and ks_for(5) == [1, 2, 4, 5] and ks_for(8) == [1, 2, 4, 8]


def test_advantages_are_group_relative():
    assert advantages([1, 0, 0, 1]) == [1.0, -1.0, -1.0, 1.0]
    assert advantages([0.5, 0.5, 0.5]) == [0.0, 0.0, 0.0]  # no signal in a group that agrees
    ranked = advantages([1.0, 0.25, 0.0])
    assert ranked[0] > ranked[1] > ranked[2] and sum(ranked) == pytest.approx(0)


def test_groups_gather_each_tasks_rollouts():
    records = [
        {"task": "b", "sample": 1, "seed": 8, "reward": 0, "status": "failed"},
        {"task": "a", "sample": 0, "seed": 7, "reward": 1, "status": "passed"},
        {"task": "b", "sample": 0, "seed": 7, "reward": 1, "status": "passed"},
        {"task": "a", "sample": 1, "seed": 8, "reward": 1, "status": "passed"},
    ]
    groups = group(records)
    assert [g["task"] for g in groups] == ["a", "b"]
    b = groups[1]
    assert (b["samples"], b["seeds"], b["rewards"]) == ([0, 1], [7, 8], [1.0, 0.0])
    assert b["advantages"] == [1.0, -1.0] and b["mean_reward"] == 0.5
    assert b["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert mean_pass_at_k(groups) == {"1": 0.75, "2": 1.0}
    # A rollout that never ran (its worker lost) is no sample of the policy: left out of the figures.
    records.append({"task": "b", "sample": 2, "seed": 9, "reward": 0, "status": "error"})
    b = group(records)[1]
    assert b["advantages"] == [1.0, -1.0, None] and b["errors"] == 1 and b["pass_at_k"] == {"1": 0.5, "2": 1.0}


def test_samples_make_groups_with_their_own_seeds_records_and_resume(tmp_path: Path):
    out = tmp_path / "oracle.json"
    tasks = "fix-off-by-one,json-to-csv"
    args = ("eval", str(SUITE), "--oracle", "--tasks", tasks, "--samples", "3", "--seed", "40", "--out", str(out))
    proc = agentcli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed 6/6 rollouts of 2 tasks (pass@1 1.00, pass@2 1.00, pass@3 1.00)" in proc.stdout
    data = json.loads(out.read_text())
    assert data["samples"] == 3 and data["seed"] == 40
    assert [(t["task"], t["sample"], t["seed"]) for t in data["tasks"]] == [
        (task, i, 40 + i) for task in ("fix-off-by-one", "json-to-csv") for i in range(3)
    ]
    assert [g["rewards"] for g in data["groups"]] == [[1.0, 1.0, 1.0]] * 2
    assert data["groups"][0]["advantages"] == [0.0, 0.0, 0.0]
    assert data["summary"]["tasks"] == 2 and data["summary"]["rollouts"] == 6
    for t in data["tasks"]:
        record = Path(t["trajectory"])
        assert record == tmp_path / "oracle-trajectories" / t["task"] / f"sample-{t['sample']}"
        assert (record / "result.json").is_file() and (record / "junit.xml").is_file()
        assert (t["agent_exit_code"], t["test_exit_code"]) == (0, 0)  # what the sandbox saw, for reward shaping

    # A fourth sample per task: only the new rollouts run.
    more = list(args)
    more[more.index("3")] = "4"
    proc = agentcli(*more, "--resume", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resume: 6 rollouts already scored" in proc.stdout and "2 to run" in proc.stdout
    data = json.loads(out.read_text())
    assert len(data["tasks"]) == 8 and [len(g["rewards"]) for g in data["groups"]] == [4, 4]
    # Another seed is another run: not mixed into this one.
    other = [a if a != "40" else "41" for a in more]
    proc = agentcli(*other, "--resume", cwd=tmp_path)
    assert proc.returncode == 2 and "seed" in proc.stderr


def test_bad_sample_counts_are_refused(tmp_path: Path):
    for bad in (("--samples", "0"), ("--temperature", "-1"), ("--ray-retries", "-2")):
        proc = agentcli("eval", str(SUITE), "--oracle", *bad, cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def test_each_rollout_of_an_agent_group_gets_its_seed(tmp_path: Path):
    """The seed reaches each agent run: its journal's settings say which one it sampled with."""
    model = replies(tmp_path, ["```bash\necho hi\n```", "DONE: said hi."])
    out = tmp_path / "agent.json"
    proc = agentcli(
        "eval", str(SUITE), "--tasks", "fix-off-by-one", "--samples", "2", "--seed", "5", "--temperature", "0.7",
        "--model", model, "--sandbox", "host", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["temperature"] == 0.7
    seen = []
    for t in data["tasks"]:
        events = [json.loads(line) for line in (Path(t["trajectory"]) / "session" / "events.jsonl").open()]
        start = next(e for e in events if e.get("type") == "run_started")
        seen.append((start["seed"], start["temperature"]))
    assert seen == [(5, 0.7), (6, 0.7)]


def test_an_eval_killed_outright_leaves_no_agent_running(tmp_path: Path):
    """SIGKILL to the eval: its agent child gets SIGTERM from its lifeline, unwinds and exits."""
    model = replies(tmp_path, ["```bash\nsleep 60\n```", "DONE: slept."])
    marker = f"lifeline-{os.getpid()}"
    eval_proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "eval", str(SUITE), "--tasks", "fix-off-by-one", "--model", model,
         "--sandbox", "host", "--out", str(tmp_path / marker / "r.json")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        env={**os.environ, "AGENTCLI_CONFIG_DIR": str(tmp_path / "cfg")},
    )  # fmt: skip

    def agents() -> list[int]:
        found = subprocess.run(["pgrep", "-f", f"solve --task-file {SUITE}"], capture_output=True, text=True)
        return [int(p) for p in found.stdout.split() if int(p) != eval_proc.pid]

    deadline = time.monotonic() + 60
    while not agents():
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.3)
    time.sleep(6)  # the agent is in its `sleep 60`
    running = agents()
    eval_proc.send_signal(signal.SIGKILL)
    eval_proc.wait()
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in running):
        assert time.monotonic() < deadline, f"agents {running} outlived their eval"
        time.sleep(0.3)


def test_a_child_is_stopped_when_the_wait_for_it_is_interrupted(tmp_path: Path):
    """A cancelled Ray rollout interrupts its worker while it waits on the agent: the agent goes too."""
    from agentcli.eval.procs import Children

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(2)
    children = Children()
    pidfile = tmp_path / "pid"
    try:
        with pytest.raises(KeyboardInterrupt):
            children.run(
                ["bash", "-c", f"echo $$ > {pidfile}; exec sleep 60"],
                cwd=tmp_path, env=dict(os.environ), timeout=None, stdout=tmp_path / "out",
            )  # fmt: skip
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    pid = int(pidfile.read_text())
    assert not Path(f"/proc/{pid}").exists()


def test_the_older_layout_is_scored_by_pytests_summary_only(tmp_path: Path):
    from agentcli.eval.harbor import pytest_verdict

    log = tmp_path / "verifier.log"
    log.write_text(
        "PASSED printed by the program under test\n"
        "---- Captured log call ----\nERROR    root:stats.py:3 a message the code logged\n"
        "=========================== short test summary info ============================\n"
        "PASSED tests/test_outputs.py::test_one\nPASSED tests/test_outputs.py::test_two\n"
        "============================== 2 passed in 0.02s ===============================\n"
    )
    verdict = pytest_verdict(log, 0, 1.0)
    assert (verdict.reward, verdict.passed, verdict.total) == (1.0, 2, 2)
    log.write_text(
        log.read_text().replace("PASSED tests/test_outputs.py::test_two", "FAILED tests/test_outputs.py::test_two - x")
    )
    verdict = pytest_verdict(log, 1, 1.0)
    assert (verdict.reward, verdict.passed, verdict.total) == (0.0, 1, 2)
    log.write_text("PASSED but pytest never got to its summary\n")
    assert pytest_verdict(log, 2, 1.0).reward == 0.0
