"""benchmarks/protocol.py tabulates what `agentcli eval` wrote, per set (dev, test, rewordings)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from agentcli.eval.results import RunInfo, TaskResult, write
from benchmarks import protocol
from tests.conftest import processes_with


def test_the_table_reads_eval_results_and_leaves_errors_out(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "RESULTS", tmp_path)
    rows = [
        TaskResult(task="a", status="passed", reward=1, steps=4, tokens_in=900, tokens_out=100, agent_seconds=30),
        TaskResult(task="b", status="failed", reward=0, steps=8, tokens_in=1800, tokens_out=200, agent_seconds=90),
        TaskResult(task="c", status="error", reason="sandbox unavailable"),
    ]
    write(tmp_path / "run" / "test-w0.json", RunInfo(agent="agentcli"), rows)
    table = protocol.table(["run"])
    assert "| run | test | 1/2 | 50% | 0.00 | 6.0 | 1500 | 60 |" in table
    assert "| run | dev |" not in table  # nothing ran there


def test_a_suite_is_built_with_the_wording_asked_for(tmp_path):
    suite = protocol.build_suite("dev", 1, tmp_path, ["fix-off-by-one"])
    task = suite / "fix-off-by-one"
    original = protocol.TASKS / "fix-off-by-one"
    assert (task / "instruction.md").read_text() == (original / "rewordings" / "1.md").read_text()
    assert not (task / "rewordings").exists() and (task / "tests").is_dir() and (task / "repo").is_dir()


def test_the_machines_speed_is_recorded_once_a_machine_and_printed(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "RESULTS", tmp_path)
    speeds = iter([{"generation_tok_s": 2.1}, {"generation_tok_s": 15.0}])
    monkeypatch.setattr(protocol, "measure", lambda model: next(speeds))
    hosts = iter(["box", "box", "other"])
    monkeypatch.setattr(protocol.socket, "gethostname", lambda: next(hosts))
    protocol.record_machine("run", "local/qwen2.5-coder-1.5b")
    protocol.record_machine("run", "local/qwen2.5-coder-1.5b")  # again on the same machine: not measured again
    protocol.record_machine("run", "local/qwen2.5-coder-1.5b")  # resumed elsewhere: both are shown
    assert protocol.machines(["run", "missing"]) == (
        "run: host box, generation_tok_s 2.1\nrun: host other, generation_tok_s 15.0"
    )


def test_tasks_whose_model_ran_slower_than_the_machines_measure_are_named(tmp_path, monkeypatch):
    import json
    import socket

    monkeypatch.setattr(protocol, "RESULTS", tmp_path)
    (tmp_path / "run").mkdir()
    speed = {"host": socket.gethostname(), "prompt_tok_s": 100.0, "generation_tok_s": 10.0}
    (tmp_path / "run" / "machine.json").write_text(json.dumps([speed]))
    rows = []
    reply = {"type": "model_replied", "prompt_evaluated": 200, "completion_tokens": 10}
    # 200 prompt tokens and 10 written: 3 s expected a call. A reply asked again costs its own call, and
    # the step's duration holds both; a step with candidates holds their checks: it is left out.
    asked_again = {"type": "reply_asked_again", "prompt_evaluated": 200, "completion_tokens": 10}
    candidates = {"type": "policy_fired", "name": "select"}
    runs = {
        "quiet": [reply | {"duration": 5.4}],
        "busy": [reply | {"duration": 9.0}],
        "asked-again": [reply | {"duration": 5.4}, asked_again, reply | {"duration": 10.8}],
        "candidates": [reply | {"duration": 5.4}, candidates, reply | {"duration": 40.0}],
    }
    for task, events in runs.items():
        (tmp_path / task).mkdir()
        (tmp_path / task / "agent.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        rows.append(TaskResult(task=task, status="failed", trajectory=str(tmp_path / task)))
    write(tmp_path / "run" / "test-w0.json", RunInfo(agent="agentcli"), rows)
    assert protocol.slowed("run").endswith("(other load?): test-w0 busy 3.0x")


def test_the_ablation_reruns_where_a_policy_fired_and_takes_the_baseline_elsewhere(tmp_path, monkeypatch):
    import json

    from benchmarks import ablation

    monkeypatch.setattr(protocol, "RESULTS", tmp_path)
    monkeypatch.setattr(ablation, "RESULTS", tmp_path)
    baseline = []
    for task, fired in (("a", ["stuck", "named-code"]), ("b", []), ("c", ["named-code"])):
        journal = tmp_path / "journals" / task
        journal.mkdir(parents=True)
        events = [{"type": "policy_fired", "name": name} for name in fired] + [{"type": "notice", "message": "x"}]
        (journal / "agent.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        baseline.append(TaskResult(task=task, status="passed", reward=1, steps=3, trajectory=str(journal)))
    write(tmp_path / "default" / "test-w0.json", RunInfo(agent="agentcli"), baseline)
    assert ablation.fired_in(tmp_path / "default" / "test-w0.json") == {"stuck": {"a"}, "named-code": {"a", "c"}}
    assert "| named-code | 0 | 2 | 0 |" in ablation.fired_table()
    # With `named-code` off, only a and c ran again; c failed: it adds one task of three on the test split.
    rerun = [TaskResult(task="a", status="passed", reward=1), TaskResult(task="c", status="failed", reward=0)]
    write(tmp_path / "off-named-code" / "test-w0.json", RunInfo(agent="agentcli"), rerun)
    assert ablation.added("off-named-code").split(" | ")[1] == "+1 of 3"


def test_the_python_loop_reference_is_timed():
    from benchmarks.machine_speed import measure

    figures = measure("openai/gpt-4o-mini")  # a hosted model: only the interpreter is timed
    assert set(figures) == {"python_loop_s"} and figures["python_loop_s"] > 0


def test_a_protocol_killed_outright_takes_its_eval_with_it(tmp_path):
    """SIGKILL to the protocol (`kill -9`, a session that ends) leaves no eval running unseen:
    its `agentcli eval` is sent SIGTERM and unwinds."""
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"replies": ["```bash\nsleep 120\n```", "DONE: slept"]}))
    script = (
        "import sys, argparse\nfrom benchmarks import protocol\n"
        f"protocol.RESULTS = __import__('pathlib').Path({str(tmp_path / 'results')!r})\n"
        "args = argparse.Namespace(tasks=['fix-off-by-one'], model=sys.argv[1], sandbox='host', timeout=200,\n"
        "    profile='small-local', policy=[], candidates=1)\n"
        "protocol.run('killed', 'dev', 0, args)\n"
    )
    started = subprocess.Popen([sys.executable, "-c", script, f"scripted:{replies}"], cwd=protocol.ROOT)
    out = str(tmp_path / "results" / "killed" / "dev-w0.json")
    deadline = time.monotonic() + 60
    while not processes_with(out) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes_with(out), "the eval never started"
    time.sleep(3)  # well into the task's `sleep 120`
    started.kill()
    started.wait()
    deadline = time.monotonic() + 40
    while processes_with(out) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not processes_with(out), "the eval outlived its protocol"
