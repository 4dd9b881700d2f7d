"""`agentcli solve` end to end: the CLI as a user runs it, a scripted model, real sandboxes, real git."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.agent.state import RunState
from agentcli.repo import mirror
from agentcli.sandbox.factory import docker_ready
from agentcli.sandbox.local import bwrap_available
from agentcli.session.journal import sessions_dir
from agentcli.session.resume import resume_point
from tests.conftest import FIX_REPLIES, committed_repo, git


def agentcli(*args: str, cwd: Path, env: dict[str, str | None] | None = None, timeout: float = 120):
    """Run the real CLI in a subprocess with stdin closed, as CI would."""
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=_environment(cwd, env or {}),
    )


def _environment(cwd: Path, overrides: dict[str, str | None]) -> dict[str, str]:
    """The test's environment with a private config dir; a None value removes the variable."""
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(cwd / ".no-user-config")}
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def solve_json(repo: Path, task: str, model: str, sandbox: str = "host"):
    """`agentcli solve --json` on `repo`: the process and its events."""
    result = agentcli("solve", task, "--model", model, "--sandbox", sandbox, "--json", cwd=repo)
    return result, [json.loads(line) for line in result.stdout.splitlines()]


def objections_in(events: list[dict]) -> list[str]:
    """What agentcli told the model instead of running its reply (objections to DONE among them)."""
    return [e["message"] for e in events if e["type"] == "format_error"]


def tree_digest(root: Path) -> dict[str, str]:
    """Every file outside .git and .agentcli, with its content hash and mode."""
    digest = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".agentcli") or path.is_dir():
            continue
        digest[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest() + oct(path.stat().st_mode)
    return digest


SANDBOXES = [
    "host",
    pytest.param(
        "bwrap",
        marks=[pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")],
    ),
    pytest.param(
        "docker",
        marks=[pytest.mark.docker, pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")],
    ),
]


@pytest.mark.parametrize("backend", SANDBOXES)
def test_solve_fixes_failing_test_then_undo_restores_exactly(failing_repo: Path, write_replies, backend: str):
    repo = failing_repo
    (repo / "notes.txt").write_text("my uncommitted notes\n")  # untracked, must survive
    (repo / "test_calc.py").write_text((repo / "test_calc.py").read_text() + "# local tweak\n")  # modified
    git(repo, "add", "test_calc.py")  # and staged
    before = tree_digest(repo)
    status_before = git(repo, "status", "--porcelain")

    result = agentcli(
        "solve", "fix the failing test", "--model", write_replies(FIX_REPLIES), "--sandbox", backend, cwd=repo
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "Run the tests again" in result.stdout  # the plan is shown
    assert "1 passed" in result.stdout  # command output is shown
    assert "calc.py" in result.stdout and "1 file changed" in result.stdout  # the diff stat
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "notes.txt").read_text() == "my uncommitted notes\n"

    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert tree_digest(repo) == before
    assert git(repo, "status", "--porcelain") == status_before


def test_json_events_and_journal(failing_repo: Path, write_replies):
    result = agentcli(
        "solve", "fix it", "--model", write_replies(FIX_REPLIES), "--sandbox", "host", "--json", cwd=failing_repo
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "result"
    assert "plan_updated" in kinds and kinds.count("command_finished") == 3
    first = next(e for e in events if e["type"] == "command_finished")
    assert first["step"] == 1 and "1 failed" in first["output"]
    final = events[-1]
    assert final["status"] == "finished" and final["files_changed"] == ["calc.py"] and final["steps"] == 4
    journal = sessions_dir(failing_repo) / final["session_id"] / "events.jsonl"
    journaled = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    assert journaled[-1] == "result" and journaled.count("command_finished") == 3
    # agentcli leaves nothing in the repository
    assert git(failing_repo, "status", "--porcelain").strip() == "M calc.py"
    listing = agentcli("sessions", cwd=failing_repo)
    assert listing.returncode == 0 and final["session_id"] in listing.stdout and "finished" in listing.stdout
    assert str(journal.parent.parent) in listing.stdout and "fix it" in listing.stdout


def test_step_limit_exits_1(failing_repo: Path, write_replies):
    replies = [f"```bash\necho {i}\n```" for i in range(5)]
    result = agentcli(
        "solve", "loop", "--model", write_replies(replies), "--sandbox", "host", "--max-steps", "2", cwd=failing_repo
    )
    assert result.returncode == 1
    assert "step limit" in result.stdout


def test_model_gave_up_exits_1(failing_repo: Path, write_replies):
    result = agentcli(
        "solve", "x", "--model", write_replies(["```bash\nls\n```"]), "--sandbox", "host", cwd=failing_repo
    )
    assert result.returncode == 1 and "model gave up" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "x", "--max-steps", "lots"], "Invalid value"),
        (["solve", "x", "--max-steps", "0"], "max_steps must be positive"),
        (["solve", "x", "--sandbox", "vm"], "sandbox must be one of"),
        (["solve", "x", "--repo", "/does/not/exist"], "does not exist"),
        (["solve", "", "--sandbox", "host"], "no task given"),
        (["solve", "x", "--model", "scripted:/does/not/exist.json", "--sandbox", "host"], "not found"),
        (["solve", "x", "--model", "anthropic/claude-sonnet-4-5", "--sandbox", "host"], "ANTHROPIC_API_KEY"),
        (["solve", "x", "--model", "gpt4", "--sandbox", "host"], "unknown model"),
        (["undo"], "nothing to undo"),
    ],
)
def test_bad_input_is_one_line_exit_2(failing_repo: Path, args: list[str], message: str):
    env = {k: None for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    result = agentcli(*args, cwd=failing_repo, env=env)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_scripted_file_is_exit_2(failing_repo: Path, tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    result = agentcli("solve", "x", "--model", f"scripted:{bad}", "--sandbox", "host", cwd=failing_repo)
    assert result.returncode == 2 and "JSON list" in result.stderr and "Traceback" not in result.stderr


def test_outside_git_is_a_clear_error_and_no_git_works(tmp_path: Path, write_replies):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = agentcli("solve", "x", "--sandbox", "host", cwd=plain)
    assert result.returncode == 2 and "not inside a git repository" in result.stderr
    replies = ["```bash\necho made > out.txt && cat out.txt\n```", "DONE: wrote out.txt"]
    result = agentcli("solve", "x", "--no-git", "--sandbox", "host", "--model", write_replies(replies), cwd=plain)
    assert result.returncode == 0, result.stderr
    assert (plain / "out.txt").read_text() == "made\n"


def test_version_and_help(tmp_path: Path):
    assert agentcli("--version", cwd=tmp_path).stdout.startswith("agentcli ")
    help_text = agentcli("--help", cwd=tmp_path).stdout
    assert "solve" in help_text and "undo" in help_text


def test_help_does_not_import_heavy_modules(tmp_path: Path):
    code = (
        "import sys; from agentcli.cli.main import app\n"
        "heavy = [m for m in ('litellm', 'docker', 'llama_cpp', 'git', 'tree_sitter') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == ""


def test_done_without_any_change_is_questioned_once_then_tried_afresh(failing_repo: Path, write_replies):
    replies = ["```bash\ncat calc.py\n```", "DONE: looked at it", "DONE: nothing to change", "DONE: really"]
    result = agentcli(
        "solve", "fix calc.py", "--model", write_replies(replies), "--sandbox", "host", "--json", cwd=failing_repo
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["steps"] == 4
    objections = objections_in(events)
    assert len(objections) == 2
    assert "No file in the repository has changed" in objections[0]
    assert "the repository's tests fail" in objections[1]  # then the failing test is the next objection
    # A second attempt is made, runs out of replies, and the first attempt's ending stands.
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("attempt 1 finished without changing anything" in n for n in notices)
    assert any("no later attempt did better: the repository is as attempt 1 left it" in n for n in notices)
    # Its DONE stood, the tests failing: no finished task, though the model's summary is kept.
    assert result.returncode == 1 and events[-1]["status"] == "failed"
    assert events[-1]["reason"] == "declared finished while the repository's tests fail"
    assert events[-1]["standing_doubt"] == "the repository's tests fail"
    assert events[-1]["summary"] == "really"


def test_with_one_attempt_a_done_that_stands_names_the_first_check_still_objecting(failing_repo: Path, write_replies):
    replies = [
        "```bash\nprintf 'def add(a, b):\\n    return (a + b\\n' > calc.py && cat calc.py\n```",
        "DONE: fixed",
        "DONE: fixed it",
        "DONE: fixed, surely",
    ]
    result = agentcli(
        "solve", "fix calc.py", "--model", write_replies(replies), "--sandbox", "host", "--json",
        "--policy", "retries=off", cwd=failing_repo,
    )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    objections = objections_in(events)
    assert len(objections) == 2 and "calc.py no longer parses" in objections[0], objections
    assert "the repository's tests fail" in objections[1]
    # Both still object; the reason is the first in the checks' order, in its first line's words.
    assert (result.returncode, events[-1]["status"]) == (1, "failed")
    assert events[-1]["standing_doubt"] == "calc.py no longer parses", events[-1]
    assert events[-1]["reason"] == "declared finished while calc.py no longer parses"
    assert events[-1]["summary"] == "fixed, surely"


def test_a_block_the_same_as_its_file_is_no_change_to_look_at(failing_repo: Path, write_replies):
    replies = [
        "calc.py\n```python\ndef add(a, b):\n    return a - b\n```",  # what calc.py already holds
        "DONE: fixed",
        "DONE: fixed it",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    objections = objections_in(events)
    assert objections and "No file in the repository has changed" in objections[0]
    assert result.returncode == 1  # the tests still fail: an honest failure
    assert not any("changed files but showed nothing" in o for o in objections)
    notes = next(e["notes"] for e in events if e["type"] == "command_started" and e["step"] == 1)
    assert any("no change (the block is the same as the file)" in n for n in notes), notes
    assert not any("rewrote" in n for n in notes), notes  # a block that rewrote nothing is not said to


def test_a_change_written_back_unchanged_is_not_begun_again(tmp_path: Path):
    """Begun at the code it was shown, a small model copies it; begun there again, it copies it again."""
    repo = committed_repo(tmp_path / "repo", {"calc.py": "def double(x):\n    return x\n"})
    replies = tmp_path / "replies.json"
    script = ["    return x\n```", "DONE: done.", "```bash\ncat calc.py\n```", "DONE: really."]
    replies.write_text(json.dumps({"replies": script, "continues_replies": True}))
    task = "Make `double` in calc.py return twice its argument."
    result, events = solve_json(repo, task, f"scripted:{replies}")
    texts = {e["step"]: e["text"] for e in events if e["type"] == "model_replied"}
    assert texts[1].startswith("calc.py\n```python\ndef double(x):\n"), texts  # the first reply begun
    assert "No file in the repository has changed" in objections_in(events)[0]
    assert texts[3] == script[2], texts  # after the copy, the model's own reply: nothing begun
    assert "Traceback" not in result.stderr
    # A run resumed at the step after the copy knows it too: no change is begun there again.
    journal = sessions_dir(repo) / events[-1]["session_id"] / "events.jsonl"
    journaled = [json.loads(line) for line in journal.read_text().splitlines()]
    until = next(i for i, e in enumerate(journaled) if e["type"] == "model_prompt" and e["step"] == 3)
    state = RunState()
    state.resume_from(resume_point(journaled[: until + 1]).at)
    assert state.copied_back == {"calc.py"}
    # One resumed at the begun first step knows its block is that definition's change, not the file.
    first = next(i for i, e in enumerate(journaled) if e["type"] == "model_prompt" and e["step"] == 1)
    state = RunState()
    state.resume_from(resume_point(journaled[: first + 1]).at)
    assert state.reply_start.endswith("def double(x):\n") and state.reply_definition == "calc.py"


def test_a_reply_asked_again_is_journaled_with_its_cost_and_counted_on_resume(tmp_path: Path):
    """A step whose reply only echoed agentcli's lines calls the model twice: the journal holds both
    calls' tokens, and a run resumed after it counts both, as the run itself did."""
    repo = committed_repo(tmp_path / "repo", {"notes.txt": "a\n"})
    look, echo = "```bash\ncat notes.txt\n```", "[exit 0 · 0.0s]\na"
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([look, echo, "```bash\necho b >> notes.txt && cat notes.txt\n```", "DONE: added b."]))
    result, events = solve_json(repo, "Add a line b to notes.txt.", f"scripted:{replies}")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    (asked_again,) = [e for e in events if e["type"] == "reply_asked_again"]
    assert asked_again["step"] == 2 and asked_again["text"] == echo and asked_again["prompt_tokens"] > 0
    calls = [e for e in events if e["type"] in ("model_replied", "reply_asked_again")]
    finished = events[-1]
    assert finished["tokens_in"] == sum(e["prompt_tokens"] for e in calls)
    journal = sessions_dir(repo) / finished["session_id"] / "events.jsonl"
    journaled = [json.loads(line) for line in journal.read_text().splitlines()]
    until = next(i for i, e in enumerate(journaled) if e["type"] == "model_prompt" and e["step"] == 3)
    at = resume_point(journaled[: until + 1]).at
    assert at.tokens_in == sum(e["prompt_tokens"] for e in calls if e["step"] < 3)
    assert at.tokens_out == sum(e["completion_tokens"] for e in calls if e["step"] < 3)


def _calc_in_lib(repo: Path) -> None:
    """calc.py moved to lib/, with a second function, and the test importing both from there."""
    (repo / "lib").mkdir()
    git(repo, "mv", "calc.py", "lib/calc.py")
    (repo / "lib" / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "from lib.calc import add, sub\n\n\ndef test_calc():\n    assert add(2, 3) == 5 and sub(3, 2) == 1\n"
    )
    git(repo, "commit", "-qam", "calc in lib")


def test_a_blocks_path_is_from_the_repository_root_wherever_the_shell_is(failing_repo: Path, write_replies):
    _calc_in_lib(failing_repo)
    replies = [
        "```bash\ncd lib && cat calc.py\n```",
        "lib/calc.py\n```python\ndef add(a, b):\n    return a + b\n```",  # only the function it changes
        "calc.py\n```python\nNOTE = 1\n```",  # from the root, though the shell is in lib/
        "```bash\ncd .. && python3 -m pytest -q\n```",
        "DONE: fixed add",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    assert result.returncode == 0, result.stdout[-2000:]
    assert "def sub(a, b)" in (failing_repo / "lib" / "calc.py").read_text()
    assert (failing_repo / "calc.py").read_text() == "NOTE = 1\n" and not (failing_repo / "lib" / "lib").exists()
    notes = [" ".join(e["notes"]) for e in events if e["type"] == "command_started"]
    assert "This wrote calc.py, from the repository's root (your shell is in lib/)" in notes[2]


@pytest.mark.parametrize(
    "change",
    [
        "```bash\necho 'def add(a, b):' > calc.py\necho '    return a + b' >> calc.py\n```",  # taken as a block
        "```bash\nsed -i '2s/a - b/a + b/' calc.py\n```",
    ],
    ids=["echoed", "sed"],
)
def test_a_shell_commands_paths_are_from_where_the_shell_is(failing_repo: Path, write_replies, change: str):
    _calc_in_lib(failing_repo)
    (failing_repo / "calc.py").write_text("def add(a, b):\n    return a - b  # the root's own\n")
    git(failing_repo, "add", "calc.py")
    git(failing_repo, "commit", "-qm", "a namesake at the root")
    replies = [
        "```bash\ncd lib && cat calc.py\n```",
        change,
        "```bash\ncd .. && python3 -m pytest -q\n```",
        "DONE: fixed add",
    ]
    result, _ = solve_json(failing_repo, "fix add", write_replies(replies))
    assert result.returncode == 0, result.stdout[-2000:]
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a - b  # the root's own\n"


def test_a_reply_begun_at_a_failure_after_cd_changes_the_file_that_failed(failing_repo: Path, tmp_path: Path):
    _calc_in_lib(failing_repo)
    run = "```bash\npython3 -c \"import calc; calc.add(1, 'x')\"\n```"
    replies = ["```bash\ncd lib\n```", run, "Again.\n" + run, "    return a + b\n```", "DONE: fixed add"]
    path = tmp_path / "replies-begun.json"
    path.write_text(json.dumps({"replies": replies, "continues_replies": True}))
    _, events = solve_json(failing_repo, "fix add", f"scripted:{path}")
    assert any(e["type"] == "notice" and "begins with a change to lib/calc.py" in e["message"] for e in events)
    assert "return a + b" in (failing_repo / "lib" / "calc.py").read_text()
    assert not (failing_repo / "lib" / "lib").exists() and not (failing_repo / "calc.py").exists()


def test_files_a_shell_command_writes_outside_the_repository_stay_there(failing_repo: Path, write_replies):
    replies = [
        "```bash\nmkdir -p ../elsewhere && cd ../elsewhere\n```",
        "```bash\necho 'x = 1' > scratch.py\necho 'y = 2' >> scratch.py\n```",  # not taken as a block
        "DONE: wrote it",
    ]
    solve_json(failing_repo, "write scratch.py", write_replies(replies))
    assert (failing_repo.parent / "elsewhere" / "scratch.py").read_text() == "x = 1\ny = 2\n"
    assert not (failing_repo / "scratch.py").exists()


def test_a_file_put_back_after_a_lossy_overwrite_is_named_as_the_command_named_it(failing_repo: Path, write_replies):
    _calc_in_lib(failing_repo)
    (failing_repo / "lib" / "notes.txt").write_text("a\nb\nc\nd\n")
    git(failing_repo, "add", ".")
    git(failing_repo, "commit", "-qm", "notes")
    replies = ["```bash\ncd lib\n```", "```bash\necho e > notes.txt\n```", "DONE: noted"]
    _, events = solve_json(failing_repo, "add e to the notes", write_replies(replies))
    journal = sessions_dir(failing_repo) / events[-1]["session_id"] / "events.jsonl"
    prompts = [json.loads(line) for line in journal.read_text().splitlines()]
    told = [m["content"] for e in prompts if e["type"] == "model_prompt" for m in e["messages"]]
    put_back = next(text for text in told if "was put back as it was" in text)
    assert (failing_repo / "lib" / "notes.txt").read_text() == "a\nb\nc\nd\n"
    assert "echo e >> notes.txt" in put_back and "write lib/notes.txt on a line, then a fenced block" in put_back


def test_done_while_a_changed_python_file_no_longer_parses_is_questioned(failing_repo: Path, write_replies):
    replies = [
        "```bash\nprintf 'def add(a, b):\\n    return (a + b\\n' > calc.py && cat calc.py\n```",
        "DONE: fixed",  # calc.py does not even parse
        "```bash\nprintf 'def add(a, b):\\n    return a + b\\n' > calc.py && python3 -m pytest -q\n```",
        "DONE: fixed now",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    objections = objections_in(events)
    assert (
        len(objections) == 1 and "calc.py no longer parses (SyntaxError: '(' was never closed, line 2)" in objections[0]
    )
    assert ">2      return (a + b" in objections[0]
    assert result.returncode == 0 and events[-1]["summary"] == "fixed now"


def test_done_while_a_changed_shell_script_does_not_parse_is_questioned(failing_repo: Path, write_replies):
    git(failing_repo, "rm", "-q", "test_calc.py")
    git(failing_repo, "commit", "-qm", "no tests")
    broken = "count() {\n  local dir=$1\n"  # the function never closes
    replies = [
        f"```bash\ncat > count.sh <<'EOF'\n{broken}EOF\ncat count.sh\n```",
        "DONE: wrote count.sh",
        f"```bash\ncat > count.sh <<'EOF'\n{broken}  find \"$dir\" -name '*.py' | wc -l\n}}\ncount .\nEOF\n"
        "bash count.sh\n```",
        "DONE: count.sh counts",
    ]
    result, events = solve_json(failing_repo, "write count.sh", write_replies(replies))
    objections = objections_in(events)
    assert len(objections) == 1 and "count.sh does not parse (`bash -O extglob -n count.sh`)" in objections[0]
    assert "syntax error: unexpected end of file" in objections[0]
    assert result.returncode == 0 and events[-1]["summary"] == "count.sh counts"
    assert (failing_repo / "count.sh").read_text().endswith("count .\n")


def test_done_while_the_docstring_examples_of_a_changed_file_fail_is_questioned(failing_repo: Path, write_replies):
    git(failing_repo, "rm", "-q", "test_calc.py")
    (failing_repo / "durations.py").write_text(
        'def parse_duration(text):\n    """Seconds in "45s".\n\n    >>> parse_duration(" 45s ")\n    45\n    """\n'
        "    raise NotImplementedError\n"
    )
    git(failing_repo, "add", "durations.py")
    git(failing_repo, "commit", "-qm", "durations")
    docstring = '    """Seconds in "45s".\n\n    >>> parse_duration(" 45s ")\n    45\n    """\n'
    wrong = f"def parse_duration(text):\n{docstring}    return int(text[:-1])\n"  # no strip: " 45s " fails
    right = f"def parse_duration(text):\n{docstring}    return int(text.strip()[:-1])\n"
    replies = [
        f"durations.py\n```python\n{wrong}```",
        "DONE: implemented",  # first told to check the change, then that the examples fail
        "DONE: implemented it",
        f"durations.py\n```python\n{right}```",
        "```bash\npython3 -m doctest durations.py\n```",
        "DONE: implemented, examples pass",
    ]
    result, events = solve_json(failing_repo, "Implement parse_duration in durations.py", write_replies(replies))
    objections = objections_in(events)
    assert any("the examples in the docstrings fail (`python3 -m doctest durations.py`)" in o for o in objections)
    assert any("Failed example:" in o and 'parse_duration(" 45s ")' in o for o in objections)
    assert result.returncode == 0 and events[-1]["summary"] == "implemented, examples pass"


def test_the_one_definition_the_task_names_is_shown_before_the_first_reply(failing_repo: Path, write_replies):
    git(failing_repo, "rm", "-q", "test_calc.py")
    durations = 'import re\n\n\ndef parse_duration(text):\n    """Seconds in "45s"."""\n    raise NotImplementedError\n'
    (failing_repo / "durations.py").write_text(durations)
    git(failing_repo, "add", "durations.py")
    git(failing_repo, "commit", "-qm", "durations")
    replies = ["```bash\nls\n```", "DONE: looked"]
    _, events = solve_json(failing_repo, "Implement parse_duration in durations.py", write_replies(replies))
    looks = [e["command"] for e in events if e["type"] == "command_started" and e["step"] == 0]
    assert looks == ["cat -n durations.py | sed -n '4,6p'"]
    shown = next(e["output"] for e in events if e["type"] == "command_finished" and e["step"] == 0)
    assert shown.splitlines()[0].split() == ["4", "def", "parse_duration(text):"]
    # "add" is a word of the task, not the name of calc.add: nothing is shown.
    _, events = solve_json(failing_repo, "add a docstring example", write_replies(["DONE: no"]))
    assert not [e for e in events if e["type"] == "command_started" and e["step"] == 0]


def test_the_one_short_source_file_the_task_names_is_shown_whole_before_the_first_reply(
    failing_repo: Path, write_replies
):
    # env-port-default: not shown server.py, the 1.5B ran the server to see what it does, again and again.
    git(failing_repo, "rm", "-q", "test_calc.py")
    (failing_repo / "server.py").write_text('PORT = 8000\n\n\ndef address():\n    return ("127.0.0.1", PORT)\n')
    git(failing_repo, "add", "server.py")
    git(failing_repo, "commit", "-qm", "server")
    replies = ["```bash\nls\n```", "DONE: looked"]
    task = "server.py always listens on port 8000. Make it use the port from the PORT environment variable."
    _, events = solve_json(failing_repo, task, write_replies(replies))
    looks = [e["command"] for e in events if e["type"] == "command_started" and e["step"] == 0]
    assert looks == ["cat -n server.py | sed -n '1,5p'"]
    # a task that writes a new file (tests of it) is no change of it
    _, events = solve_json(failing_repo, "Write tests/test_server.py for server.py", write_replies(["DONE: no"]))
    assert not [e for e in events if e["type"] == "command_started" and e["step"] == 0]
    # two files named: which one the change goes to is the model's to find
    _, events = solve_json(failing_repo, "Make server.py use calc.py", write_replies(["DONE: no"]))
    assert not [e for e in events if e["type"] == "command_started" and e["step"] == 0]


def test_tests_that_pass_before_the_first_reply_are_not_shown(failing_repo: Path, write_replies):
    (failing_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(failing_repo, "commit", "-qam", "fixed")
    replies = [
        "```bash\nprintf 'def sub(a, b):\\n    return a - b\\n' >> calc.py && cat calc.py\n```",
        "DONE: added sub",
    ]
    result, events = solve_json(failing_repo, "write a sub(a, b) function beside the other one", write_replies(replies))
    assert result.returncode == 0 and events[-1]["summary"] == "added sub"
    assert [e["step"] for e in events if e["type"] == "command_finished"] == [1]  # no look at step 0


COUNT_TASK = "How many functions are there? Write just the number to count.txt."


def test_tests_failing_before_a_task_that_does_not_speak_of_them_are_neither_shown_nor_held_against_it(
    failing_repo: Path, write_replies
):
    (failing_repo / "test_words.py").write_text(
        "from calc import add\n\n\ndef test_words():\n    assert add(0, 0) == 0\n"
    )
    git(failing_repo, "add", ".")
    git(failing_repo, "commit", "-qm", "words")
    replies = [
        "```bash\nprintf '2\\n' > count.txt && cat count.txt\n```",
        "DONE: counted",
    ]
    result, events = solve_json(failing_repo, COUNT_TASK, write_replies(replies))
    assert result.returncode == 0 and events[-1]["summary"] == "counted"
    assert [e["step"] for e in events if e["type"] == "command_finished"] == [1]  # test_calc's failure not shown
    assert not [e for e in events if e["type"] == "format_error"]
    assert {"type": "policy_fired", "name": "failing-before"} in [
        {k: e[k] for k in ("type", "name") if k in e} for e in events
    ]
    # With the policy that reads the task's wording off, the old failure is held against it.
    recount = ["```bash\nprintf '3\\n' > count.txt && cat count.txt\n```", "DONE: counted"]
    result = agentcli(
        "solve", COUNT_TASK, "--model", write_replies(recount), "--sandbox", "host", "--json",
        "--policy", "failing-before=off", cwd=failing_repo,
    )  # fmt: skip
    objections = objections_in([json.loads(line) for line in result.stdout.splitlines()])
    assert objections and "the repository's tests fail" in objections[0] and "test_calc" in objections[0]
    # A failure the task's change brings is held against it, behind the old one too.
    replies = [
        "```bash\nprintf 'def add(a, b):\\n    return 1\\n' > calc.py && printf '2\\n' > count.txt && cat calc.py\n```",
        "DONE: counted",
    ]
    result, events = solve_json(failing_repo, COUNT_TASK, write_replies(replies))
    objections = objections_in(events)
    assert objections and "the repository's tests fail" in objections[0] and "test_words" in objections[0]


def test_done_after_only_printing_what_was_to_be_written_is_questioned(failing_repo: Path, write_replies):
    git(failing_repo, "rm", "-q", "test_calc.py")
    (failing_repo / "logs").mkdir()
    (failing_repo / "logs" / "job.log").write_text("INFO start\nERROR disk full\nINFO end\n")
    git(failing_repo, "add", "logs")
    git(failing_repo, "commit", "-qm", "log")
    replies = [
        "```bash\ngrep ERROR logs/job.log\n```",
        "DONE: found the ERROR line",  # printed, never written
        "```bash\ngrep ERROR logs/job.log > root_cause.txt && cat root_cause.txt\n```",
        "DONE: wrote root_cause.txt",
    ]
    task = "Find the root cause in logs/job.log and write its ERROR line to root_cause.txt."
    result, events = solve_json(failing_repo, task, write_replies(replies))
    objections = objections_in(events)
    assert len(objections) == 1 and "No file in the repository has changed yet" in objections[0]
    assert result.returncode == 0 and events[-1]["summary"] == "wrote root_cause.txt"
    assert (failing_repo / "root_cause.txt").read_text() == "ERROR disk full\n"


def test_done_with_an_empty_new_file_is_questioned(failing_repo: Path, write_replies):
    git(failing_repo, "rm", "-q", "test_calc.py")
    git(failing_repo, "commit", "-qm", "no tests")
    replies = [
        "```bash\nmkdir -p tools && touch tools/count.sh && ls tools\n```",
        "DONE: wrote the script",  # an empty file
        '```bash\nprintf \'find "$1" -name "*.py" | wc -l\\n\' > tools/count.sh && bash tools/count.sh .\n```',
        "DONE: wrote it now",
    ]
    result, events = solve_json(failing_repo, "write tools/count.sh", write_replies(replies))
    objections = objections_in(events)
    assert len(objections) == 1 and "tools/count.sh was created but is empty" in objections[0]
    assert result.returncode == 0 and events[-1]["summary"] == "wrote it now"


def test_an_attempt_that_gives_up_is_taken_back_and_tried_afresh(failing_repo: Path, write_replies):
    (failing_repo / "notes.txt").write_text("my uncommitted notes\n")
    replies = [
        "Break it first.\n```bash\necho broken > calc.py && echo junk > junk.txt\n```",
        *[f"I am not sure what to do ({i})." for i in range(5)],  # no command: the attempt gives up
        "```bash\nsed -i 's/a - b/a + b/' calc.py && python3 -m pytest -q -p no:cacheprovider\n```",
        "DONE: add() adds",
    ]
    result = agentcli(
        "solve", "fix add", "--model", write_replies(replies), "--sandbox", "host", "--json", cwd=failing_repo
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    final = events[-1]
    assert final["status"] == "finished" and final["files_changed"] == ["calc.py"] and final["steps"] == 8
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("attempt 1 ended early (5 replies in a row had no usable command)" in n for n in notices)
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (failing_repo / "junk.txt").exists()  # the first attempt's files were taken back
    assert (failing_repo / "notes.txt").read_text() == "my uncommitted notes\n"  # the user's were not
    undo = agentcli("undo", cwd=failing_repo)
    assert undo.returncode == 0 and (failing_repo / "calc.py").read_text().endswith("return a - b\n")


def test_a_branch_an_attempt_made_is_gone_when_it_is_taken_back_and_after_undo(failing_repo: Path, write_replies):
    # git-branch-commit: after attempt 1 was put back, attempt 2's `git checkout -b fix/typo` failed:
    # "a branch named 'fix/typo' already exists".
    git(failing_repo, "branch", "keep-me")  # the user's own branch
    make = "```bash\ngit checkout -b fix/typo && git commit -qam wip --allow-empty && git branch\n```"
    replies = [make, *[f"I am not sure ({i})." for i in range(5)], make, "DONE: on fix/typo"]
    _, events = solve_json(failing_repo, "fix add on a branch fix/typo", write_replies(replies))
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("attempt 1 ended early" in n for n in notices)
    second = [e for e in events if e["type"] == "command_finished" and e["step"] > 1]
    assert second and second[0]["exit_code"] == 0, second  # the branch was made afresh
    branches = git(failing_repo, "branch", "--format=%(refname:short)").split()
    assert "fix/typo" in branches and "keep-me" in branches
    undo = agentcli("undo", cwd=failing_repo)
    assert undo.returncode == 0, undo.stderr
    branches = git(failing_repo, "branch", "--format=%(refname:short)").split()
    assert "fix/typo" not in branches and "keep-me" in branches
    kept = git(failing_repo, "for-each-ref", "--format=%(refname)", "refs/agentcli/before-undo")
    assert "/heads/fix/typo" in kept  # its commits stay reachable


def test_a_right_change_set_aside_comes_back_when_a_later_attempt_destroys_the_git_data(
    failing_repo: Path, write_replies
):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py\n```",  # the fix, then the model loses its way
        *[f"I am not sure what to do ({i})." for i in range(5)],
        "```bash\nrm -rf .git\n```",  # attempt 2
        "DONE: cleaned up",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    notices = "\n".join(e["message"] for e in events if e["type"] == "notice")
    assert "attempt 2 damaged git's data: the repository is as attempt 1 left it" in notices
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert git(failing_repo, "log", "--format=%s").strip() == "init"
    assert result.returncode != 0 and events[-1]["status"] == "failed"
    assert events[-1]["files_changed"] == ["calc.py"] and "no usable command" in events[-1]["reason"]


def test_a_right_change_left_by_an_attempt_that_gave_up_comes_back_when_no_later_attempt_does_better(
    failing_repo: Path, write_replies
):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py\n```",  # the fix, then the model loses its way
        *[f"I am not sure what to do ({i})." for i in range(5)],
        "```bash\necho '# looked' >> calc.py && tail -1 calc.py\n```",  # attempt 2 finishes, tests failing
        "DONE: looked",
        "DONE: looked again",
    ]  # attempt 3 gets no reply at all
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("attempt 1 ended early" in n for n in notices)
    assert "attempt 2 finished while the repository's tests fail: the repository was put back" in "\n".join(notices)
    assert any("no later attempt did better: the repository is as attempt 1 left it" in n for n in notices)
    assert (failing_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    final = events[-1]
    assert result.returncode != 0 and final["status"] == "failed" and "no usable command" in final["reason"]
    assert final["files_changed"] == ["calc.py"] and final["steps"] == 9


@pytest.mark.parametrize("backend", SANDBOXES)
def test_done_while_the_repository_tests_fail_is_questioned_with_their_output(
    failing_repo: Path, write_replies, backend: str
):
    replies = [
        "```bash\necho '# looked' >> calc.py && tail -1 calc.py\n```",
        "DONE: fixed",  # it is not: the test still fails
        "```bash\nsed -i 's/a - b/a + b/' calc.py && python3 -m pytest -q -p no:cacheprovider\n```",
        "DONE: fixed now",
    ]
    result = agentcli(
        "solve", "fix add", "--model", write_replies(replies), "--sandbox", backend, "--json", cwd=failing_repo
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    assert events[-1]["status"] == "finished" and events[-1]["steps"] == 4
    objections = objections_in(events)
    assert len(objections) == 1 and "the repository's tests fail" in objections[0]
    assert "assert -1 == 5" in objections[0]  # pytest's own account of the failure
    # Checking left nothing behind in the repository.
    assert git(failing_repo, "status", "--porcelain", "--ignored").split() == ["M", "calc.py"]


def test_done_with_staged_changes_left_uncommitted_is_questioned(failing_repo: Path, write_replies):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py && git add calc.py && git status --short\n```",
        "DONE: fixed and committed",  # it is not committed
        "```bash\ngit commit -qm 'Fix add' && git log --oneline | head -1\n```",
        "DONE: committed",
    ]
    result, events = solve_json(failing_repo, "fix add and commit", write_replies(replies))
    objections = objections_in(events)
    assert result.returncode == 0 and len(objections) == 1, objections
    assert "changes are staged but not committed (calc.py)" in objections[0]
    assert git(failing_repo, "log", "-1", "--format=%s").strip() == "Fix add"


def test_a_fresh_attempt_is_told_how_the_one_taken_back_ended_and_what_it_ran(failing_repo: Path, write_replies):
    from agentcli.config import Settings
    from agentcli.session.solve import Session

    replies = [
        "```bash\ngrep -n add calc.py\n```",
        *[f"I am not sure what to do ({i})." for i in range(5)],  # no command: the attempt gives up
        "```bash\nsed -i 's/a - b/a + b/' calc.py && python3 -m pytest -q -p no:cacheprovider\n```",
        "DONE: add() adds",
    ]
    session = Session(failing_repo, Settings(model=write_replies(replies), sandbox="host"))
    try:
        mark = session.begin_task()
        session.create_sandbox().start()
        outcome = session.attempts("fix add", mark)
    finally:
        session.close_sandbox()
        session.close()
    assert outcome.status == "finished" and outcome.summary == "add() adds"
    calls = session.model.calls  # type: ignore[attr-defined]
    first, fresh = calls[0][-1]["content"], calls[6][-1]["content"]
    told = (
        "Attempt 1 at this task was taken back (the repository is as it was before it): it ended early "
        "(5 replies in a row had no usable command). Its last commands: `grep -n add calc.py`. "
        "Take another way this time."
    )
    assert told not in first and told in fresh


def test_a_commit_that_only_stops_tracking_a_file_is_a_change(failing_repo: Path, write_replies):
    # git-untrack-file: `git rm --cached debug.log` and a commit leave every file as it was on disk.
    replies = [
        "```bash\ngit rm -q --cached calc.py && git commit -qm untrack && git status --short\n```",
        "DONE: untracked",
    ]
    result, events = solve_json(
        failing_repo, "Stop tracking calc.py in git but keep it on disk.", write_replies(replies)
    )
    assert result.returncode == 0 and events[-1]["summary"] == "untracked"
    assert not [e for e in events if e["type"] == "format_error"]


FIXED_BLOB = "def add(a, b):\n    return a + b\n"
# The loose object of the fixed calc.py, rewritten to hold other bytes under its id (a forged object).
FORGE_FIXED_BLOB = (
    "python3 -c \"import hashlib, os, zlib; d = b'def add(a, b):\\n    return a + b\\n'; "
    "h = hashlib.sha1(b'blob %d\\0' % len(d) + d).hexdigest(); p = f'.git/objects/{h[:2]}/{h[2:]}'; "
    "e = b'import os; os.system(\\'evil\\')\\n'; os.makedirs(os.path.dirname(p), exist_ok=True); "
    "os.path.exists(p) and os.chmod(p, 0o644); open(p, 'wb').write(zlib.compress(b'blob %d\\0' % len(e) + e))\""
)


@pytest.mark.parametrize(
    "destroy",
    [
        "git reflog expire --expire=now --all && git gc -q --prune=now",  # the kept state's objects collected
        FORGE_FIXED_BLOB,
    ],
    ids=["gc", "forged"],
)
def test_the_state_an_earlier_attempt_left_comes_back_whatever_a_later_one_did_to_git(
    failing_repo: Path, write_replies, destroy: str
):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py\n```",
        *[f"I am not sure what to do ({i})." for i in range(5)],
        f"```bash\n{destroy} && echo '# looked' >> calc.py\n```",
        "DONE: looked",
        "DONE: looked again",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies))
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("no later attempt did better: the repository is as attempt 1 left it" in n for n in notices), (
        notices,
        result.stderr,
    )
    assert (failing_repo / "calc.py").read_text() == FIXED_BLOB
    assert git(failing_repo, "status", "--porcelain").strip() == "M calc.py"
    copy = mirror.location(failing_repo)
    assert git(failing_repo, "--git-dir", str(copy), "for-each-ref", mirror.ASIDE_REFS) == ""  # dropped at the end


@pytest.mark.parametrize("backend", SANDBOXES[1:])  # the host backend isolates nothing to stop
def test_a_process_left_running_plants_no_link_that_agentcli_writes_through_between_attempts(
    failing_repo: Path, write_replies, tmp_path: Path, backend: str
):
    """Between attempts agentcli sets the state aside and puts the repository back, writing reflogs; a
    process the attempt left running keeps a link at them, pointing at a host file. The sandbox is
    stopped meanwhile, and remove_planted removes the links first."""
    victim = tmp_path / "victim.txt"
    victim.write_text("host file\n")
    plant = f"ln -sfn {victim} .git/logs/HEAD; ln -sfn {victim} .git/logs/refs/heads/main"
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py && git -c user.name=a -c user.email=a@b commit -qam fix\n```",
        f"```bash\nnohup timeout 60 bash -c 'while :; do {plant}; done' >/dev/null 2>&1 &\n```",
        *[f"I am not sure what to do ({i})." for i in range(5)],  # attempt 1 ends early: a retry
        "DONE: nothing to do",
        "DONE: nothing to do",
    ]
    result, events = solve_json(failing_repo, "fix add", write_replies(replies), sandbox=backend)
    notices = "\n".join(e["message"] for e in events if e["type"] == "notice")
    assert "attempt 1 ended early" in notices, result.stderr[-2000:]
    assert victim.read_text() == "host file\n"
