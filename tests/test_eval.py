"""`agentcli eval` end to end: the real task suite, real git, real pytest, real sandboxes, the CLI as users run it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from agentcli.sandbox.local import bwrap_available
from agentcli.session.journal import sessions_dir
from tests.conftest import processes_with

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "tasks"
# Quick tasks of different kinds: a bug fix, a git chore that commits, file modes, data.
QUICK = ["fix-off-by-one", "git-branch-commit", "make-script-executable", "json-to-csv"]

SANDBOXES = [
    "host",
    pytest.param(
        "bwrap",
        marks=[pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")],
    ),
]

FIX_OFF_BY_ONE = [
    "PLAN:\n1. Run the tests.\n2. Fix the first index of a page.\n\n```bash\npython3 -m pytest -q test_pager.py\n```",
    "Page 1 starts at 0.\n```bash\nsed -i 's/start = page \\* per_page/start = (page - 1) * per_page/' pager.py\n```",
    "```bash\npython3 -m pytest -q test_pager.py\n```",
    "DONE: a page now starts at (page - 1) * per_page.",
]


def agentcli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess, stdin closed, a private (empty) user config."""
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(cwd / ".no-user-config")}
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=env,
    )


def results(path: Path) -> dict[str, dict]:
    return {t["task"]: t for t in json.loads(path.read_text())["tasks"]}


def replies(tmp_path: Path, texts: list[str]) -> str:
    path = tmp_path / f"replies-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(texts))
    return f"scripted:{path}"


def test_oracle_passes_every_task(tmp_path: Path):
    out = tmp_path / "oracle.json"
    proc = agentcli(
        "eval", str(SUITE), "--oracle", "--tasks", ",".join(QUICK), "-j", "2", "--out", str(out), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-check (oracle): ok" in proc.stdout
    done = results(out)
    assert sorted(done) == sorted(QUICK)
    for task in done.values():
        assert (task["status"], task["reward"], task["test_share"]) == ("passed", 1, 1.0), task
        assert task["tests_total"] > 0 and task["tests_passed"] == task["tests_total"]
    data = json.loads(out.read_text())
    assert data["complete"] is True and data["summary"]["solved"] == len(QUICK)
    # Every task keeps its records: the solution's output, the tests' output and XML, the change.
    record = tmp_path / "oracle-trajectories" / "git-branch-commit"
    assert {"solution.log", "tests.log", "junit.xml", "result.json", "changes.patch"} <= {
        p.name for p in record.iterdir()
    }


def test_noop_fails_every_task_with_partial_credit_counted(tmp_path: Path):
    out = tmp_path / "noop.json"
    proc = agentcli("eval", str(SUITE), "--noop", "--tasks", ",".join(QUICK), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-check (noop): ok" in proc.stdout
    done = results(out)
    assert all(t["reward"] == 0 and t["status"] == "failed" for t in done.values())
    # One of fix-off-by-one's three checks holds before any fix: the share counts it.
    fix = done["fix-off-by-one"]
    assert (fix["tests_passed"], fix["tests_total"], fix["test_share"]) == (1, 3, 0.3333)


@pytest.mark.parametrize("backend", SANDBOXES)
def test_scripted_agent_solves_a_task(tmp_path: Path, backend: str):
    out = tmp_path / "run.json"
    model = replies(tmp_path, FIX_OFF_BY_ONE)
    args = ["--tasks", "fix-off-by-one", "--model", model, "--sandbox", backend, "--out", str(out)]
    stream = tmp_path / "stream.jsonl"
    args += ["--trajectory-format", "atif", "--stream", str(stream)]
    proc = agentcli("eval", str(SUITE), *args, "--timeout", "120", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    task = results(out)["fix-off-by-one"]
    assert (task["status"], task["reward"], task["tests_passed"], task["tests_total"]) == ("passed", 1, 3, 3)
    assert task["agent_status"] == "finished" and task["steps"] == 4 and task["tokens_in"] > 0
    assert "fix-off-by-one" in proc.stdout and "solved 1/1" in proc.stdout
    record = Path(task["trajectory"])
    events = [json.loads(line) for line in (record / "session" / "events.jsonl").read_text().splitlines()]
    commands = [e["command"] for e in events if e["type"] == "command_finished" and e["step"] > 0]
    assert commands[0].startswith("python3 -m pytest") and "sed -i" in commands[1]
    looks = [e["command"] for e in events if e["type"] == "command_finished" and e["step"] == 0]
    assert looks == ["cat -n pager.py | sed -n '1,16p'"]  # the file the task names, shown before the first reply
    assert "+    start = (page - 1) * per_page" in (record / "changes.patch").read_text()
    atif = json.loads((record / "trajectory.atif.json").read_text())
    assert atif["schema_version"] == "ATIF-v1.4" and atif["extra"]["status"] == "finished"
    assert [s["tool_calls"][0]["arguments"]["command"] for s in atif["steps"] if "tool_calls" in s] == commands
    (streamed,) = [json.loads(line) for line in stream.read_text().splitlines()]
    assert streamed["task"] == "fix-off-by-one" and streamed["reward"] == 1 and streamed["atif"] == atif


def test_scripted_agent_that_does_the_wrong_thing_gets_no_reward(tmp_path: Path):
    out = tmp_path / "run.json"
    # The repository's failing tests object to the first DONE; the model insists, and its DONE stands
    # while they still fail: the agent's own verdict says so, as the reward does.
    model = replies(
        tmp_path,
        [
            "```bash\necho 'not a fix' >> README.md && tail -1 README.md\n```",
            "DONE: all fixed.",
            "DONE: all fixed, sure.",
        ],
    )
    model = "scripted:" + Path(model.removeprefix("scripted:")).name  # relative to where eval runs, not the task
    args = ["--tasks", "fix-off-by-one", "--model", model, "--sandbox", "host", "--out", str(out)]
    proc = agentcli("eval", str(SUITE), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the run completed; the reward says the rest
    task = results(out)["fix-off-by-one"]
    assert (task["status"], task["reward"], task["agent_status"]) == ("failed", 0, "failed")
    assert task["reason"] == "declared finished while the repository's tests fail"


def make_suite(root: Path) -> Path:
    """Two real tasks and two broken folders."""
    suite = root / "suite"
    for name in ("fix-off-by-one", "json-to-csv"):
        shutil.copytree(SUITE / name, suite / name)
    shutil.copytree(SUITE / "count-todos", suite / "no-instruction")
    (suite / "no-instruction" / "instruction.md").unlink()
    shutil.copytree(SUITE / "count-todos", suite / "no-tests")
    shutil.rmtree(suite / "no-tests" / "tests")
    return suite


def test_malformed_tasks_are_reported_and_the_rest_runs(tmp_path: Path):
    suite = make_suite(tmp_path)
    out = tmp_path / "oracle.json"
    proc = agentcli("eval", str(suite), "--oracle", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the self-check fails: two tasks cannot run
    assert "Traceback" not in proc.stdout + proc.stderr
    done = results(out)
    assert done["no-instruction"]["status"] == "error"
    assert "missing instruction.md" in done["no-instruction"]["reason"]
    assert done["no-tests"]["status"] == "error" and "missing tests/" in done["no-tests"]["reason"]
    assert done["fix-off-by-one"]["reward"] == 1 and done["json-to-csv"]["reward"] == 1
    assert "no-tests" in proc.stdout and "missing tests/" in proc.stdout

    # An agent run over the same suite completes: exit 0, the broken tasks reported as errors.
    model = replies(tmp_path, FIX_OFF_BY_ONE)
    args = ["--model", model, "--sandbox", "host", "--out", str(tmp_path / "agent.json")]
    proc = agentcli("eval", str(suite), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    done = results(tmp_path / "agent.json")
    assert [done[t]["status"] for t in ("no-instruction", "no-tests")] == ["error", "error"]
    assert done["fix-off-by-one"]["reward"] == 1


def test_resume_skips_tasks_already_scored(tmp_path: Path):
    out = tmp_path / "oracle.json"
    first = agentcli(
        "eval", str(SUITE), "--oracle", "--tasks", "fix-off-by-one,json-to-csv", "--out", str(out), cwd=tmp_path
    )
    assert first.returncode == 0, first.stdout + first.stderr
    before = results(out)

    args = ["--oracle", "--tasks", "fix-off-by-one,json-to-csv,count-todos", "--out", str(out), "--resume"]
    second = agentcli("eval", str(SUITE), *args, cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 tasks already scored" in second.stdout
    assert "count-todos: passed" in second.stdout and "fix-off-by-one: passed" not in second.stdout
    after = results(out)
    assert sorted(after) == ["count-todos", "fix-off-by-one", "json-to-csv"]
    for name in ("fix-off-by-one", "json-to-csv"):
        assert after[name] == before[name]  # carried over, not run again

    # Resuming a file of another kind of run would mix results: refused.
    mixed = agentcli("eval", str(SUITE), "--noop", "--out", str(out), "--resume", cwd=tmp_path)
    assert mixed.returncode == 2 and "cannot resume" in mixed.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
@pytest.mark.parametrize("backend", SANDBOXES)
def test_interrupted_eval_leaves_no_process_behind(tmp_path: Path, backend: str, signum: int):
    marker = f"evalmarker{uuid.uuid4().hex[:8]}"
    # The marker names the shell's $0, so it shows in that process's command line.
    model = replies(tmp_path, [f"```bash\nbash -c 'sleep 300; true' {marker}\n```", "DONE: slept."])
    workdirs_before = set(Path(tempfile.gettempdir()).glob("agentcli-eval-*"))
    out = tmp_path / "run.json"
    args = ["--tasks", "fix-off-by-one,json-to-csv", "-j", "2", "--model", model, "--sandbox", backend]
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(tmp_path / ".no-user-config")}
    eval_proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "eval", str(SUITE), *args, "--out", str(out)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(processes_with(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(processes_with(marker)) >= 2, "both tasks' commands should be running"
        eval_proc.send_signal(signum)
        output, _ = eval_proc.communicate(timeout=60)
    finally:
        if eval_proc.poll() is None:
            eval_proc.kill()
    assert eval_proc.returncode == 130, output
    assert "--resume runs them" in output
    assert processes_with(marker) == []
    assert set(Path(tempfile.gettempdir()).glob("agentcli-eval-*")) <= workdirs_before  # work dirs removed
    data = json.loads(out.read_text())
    assert data["complete"] is False and data["tasks"] == []  # a half-run task has no result


def test_bad_input_is_one_line_with_exit_2(tmp_path: Path):
    unknown = agentcli("eval", str(SUITE), "--tasks", "no-such-task", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown task(s)" in unknown.stderr and "no-such-task" in unknown.stderr
    missing = agentcli("eval", str(tmp_path / "nowhere"), "--oracle", cwd=tmp_path)
    assert missing.returncode == 2 and "suite directory not found" in missing.stderr
    resume = agentcli("eval", str(SUITE), "--oracle", "--resume", cwd=tmp_path)
    assert resume.returncode == 2 and "--resume needs --out" in resume.stderr
    both = agentcli("eval", str(SUITE), "--oracle", "--noop", cwd=tmp_path)
    assert both.returncode == 2 and "exclude each other" in both.stderr
    no_model = agentcli("eval", str(SUITE), "--model", "local/not-here.gguf", "--sandbox", "host", cwd=tmp_path)
    assert no_model.returncode == 2 and "model file not found" in no_model.stderr  # before any task runs
    assert "[1/" not in no_model.stdout
    for proc in (unknown, missing, resume, both, no_model):
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_journal_of_a_crashed_run_is_kept_without_its_fifo(tmp_path: Path):
    from agentcli.eval.agents import save_journal

    commands = sessions_dir(tmp_path / "work") / "s1" / "commands"
    commands.mkdir(parents=True)
    (commands / "0001.sh").write_text("ls\n")
    os.mkfifo(commands / "watchdog.0")  # what a run killed by a signal leaves behind
    save_journal(tmp_path / "work", tmp_path / "out")
    assert (tmp_path / "out" / "session" / "commands" / "0001.sh").read_text() == "ls\n"
    assert not (tmp_path / "out" / "session" / "commands" / "watchdog.0").exists()
    assert not sessions_dir(tmp_path / "work").exists()
