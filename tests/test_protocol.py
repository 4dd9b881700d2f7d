"""benchmarks/protocol.py tabulates what `agentcli eval` wrote, per set (dev, test, rewordings)."""

from __future__ import annotations

from agentcli.eval.results import RunInfo, TaskResult, write
from benchmarks import protocol


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


def test_the_machines_speed_is_recorded_at_each_invocation_and_printed(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "RESULTS", tmp_path)
    speeds = iter([{"generation_tok_s": 2.1}, {"generation_tok_s": 15.0}])
    monkeypatch.setattr(protocol, "measure", lambda model: next(speeds))
    monkeypatch.setattr(protocol.socket, "gethostname", lambda: "box")
    protocol.record_machine("run", "local/qwen2.5-coder-1.5b")
    protocol.record_machine("run", "local/qwen2.5-coder-1.5b")  # resumed, perhaps elsewhere: both are shown
    assert protocol.machines(["run", "other"]) == (
        "run: host box, generation_tok_s 2.1\nrun: host box, generation_tok_s 15.0"
    )


def test_the_python_loop_reference_is_timed():
    from benchmarks.machine_speed import measure

    figures = measure("openai/gpt-4o-mini")  # a hosted model: only the interpreter is timed
    assert set(figures) == {"python_loop_s"} and figures["python_loop_s"] > 0
