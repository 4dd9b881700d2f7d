"""`agentcli export --format atif`: a run's trajectory in Harbor's ATIF, validated against the format's schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.conftest import FIX_REPLIES
from tests.test_solve import agentcli

SCHEMA = json.loads((Path(__file__).parent / "data" / "atif-v1.4.schema.json").read_text())


def test_a_run_exports_as_valid_atif_with_calls_linked_to_their_observations(failing_repo: Path, write_replies):
    replies = [*FIX_REPLIES[:2], "DONE: too early?", *FIX_REPLIES[2:]]
    solved = agentcli("solve", "fix calc.py", "--model", write_replies(replies), "--sandbox", "host", cwd=failing_repo)
    assert solved.returncode == 0, solved.stderr
    exported = agentcli("export", "--format", "atif", cwd=failing_repo)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    jsonschema.validate(document, SCHEMA, format_checker=jsonschema.FormatChecker())

    steps = document["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0] == {**steps[0], "source": "user", "message": "fix calc.py"}
    # The file the task names was shown before the first reply: a system step with its lines.
    assert steps[1]["source"] == "system" and "return a - b" in steps[1]["observation"]["results"][0]["content"]
    agent_steps = [s for s in steps if s["source"] == "agent"]
    assert [s["message"] for s in agent_steps] == replies
    fix = next(s for s in agent_steps if "sed -i" in s["message"])
    (call,) = fix["tool_calls"]
    assert call["function_name"] == "bash" and call["arguments"]["command"].startswith("sed -i")
    (result,) = fix["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"]
    assert fix["extra"]["commands"][0]["exit_code"] == 0
    # agentcli's objection to the early DONE is the observation of that step, linked to no call.
    early = next(s for s in agent_steps if s["message"] == "DONE: too early?")
    assert "tool_calls" not in early and early["observation"]["results"][0]["content"].startswith("Not done yet")
    assert early["extra"]["feedback"] == ["format_error"]
    metrics = document["final_metrics"]
    assert metrics["total_prompt_tokens"] == sum(s["metrics"]["prompt_tokens"] for s in agent_steps) > 0
    assert document["extra"]["status"] == "finished" and document["extra"]["files_changed"] == ["calc.py"]


def test_export_to_a_file_the_journal_as_is_and_bad_input(failing_repo: Path, write_replies, tmp_path: Path):
    agentcli("solve", "fix it", "--model", write_replies(FIX_REPLIES), "--sandbox", "host", cwd=failing_repo)
    out = tmp_path / "t.json"
    written = agentcli("export", "-o", str(out), cwd=failing_repo)
    assert written.returncode == 0 and json.loads(out.read_text())["schema_version"] == "ATIF-v1.4"
    session = json.loads(out.read_text())["session_id"]
    journal = agentcli("export", session[:12], "--format", "jsonl", cwd=failing_repo)
    assert journal.returncode == 0 and json.loads(journal.stdout.splitlines()[0])["type"] == "run_started"
    for args, said in (
        (["--format", "xml"], "unknown format"),
        (["nosuchsession"], "no session 'nosuchsession'"),
    ):
        bad = agentcli("export", *args, cwd=failing_repo)
        assert bad.returncode == 2 and said in bad.stderr and "Traceback" not in bad.stderr
