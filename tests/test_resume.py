"""`agentcli resume`: a run killed at any point goes on from its journal and ends as an uninterrupted
one does: the same files, the same prompts to the model, the shell's directory and variables kept."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from agentcli.sandbox.local import bwrap_available
from agentcli.session.journal import read_events, sessions_dir
from agentcli.session.replay import prompts, standing
from agentcli.session.resume import restorable
from tests.conftest import git

# A step that appends (run twice, it would show), a slow one to be killed in, state the shell keeps.
REPLIES = [
    "PLAN:\n1. Start the log.\n2. Add to it.\n3. Greet.\n\n"
    "```bash\nmkdir -p sub && cd sub && export GREETING=hello && echo one >> ../log.txt\n```",
    "```bash\nsleep 4; echo two >> ../log.txt\n```",
    '```bash\necho "$GREETING from $(basename "$PWD")" > greeting.txt\n```',
    "```bash\ncat greeting.txt ../log.txt\n```",
    "DONE: the log has two lines and sub/greeting.txt greets.",
]
TASK = "Start log.txt with a line, add a second line, then write a greeting into sub/greeting.txt."

SANDBOXES = [
    "host",
    pytest.param(
        "bwrap",
        marks=[pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")],
    ),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("notes\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


def _cli(repo: Path, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(repo.parent / "cfg"), "AGENTCLI_CACHE": "0"}
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def _solve(repo: Path, model: str, sandbox: str, kill_at: tuple[str, int] | None = None) -> int:
    """Run solve; with `kill_at` (an event type and a step), SIGKILL it as that event is printed."""
    proc = _cli(repo, "solve", TASK, "--model", model, "--sandbox", sandbox, "--json", "--ci")
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if kill_at and event.get("type") == kill_at[0] and event.get("step") == kill_at[1]:
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate(timeout=120)
    return proc.returncode


def _resume(repo: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = _cli(repo, "resume", "--json", "--ci")
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _journal(repo: Path) -> list[dict]:
    (session,) = sorted(sessions_dir(repo).glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)[-1:]
    return read_events(session)


def _prompts(events: list[dict]) -> list[list[dict]]:
    """The prompts of the trajectory that stands, commands' durations left out (they differ run to run)."""
    return [
        [{**m, "content": re.sub(r" · [0-9.]+ ?m?s\]", "]", m["content"])} for m in p.messages]
        for p in prompts(standing(events))
    ]


def _files(repo: Path) -> dict[str, str]:
    return {name: (repo / name).read_text() for name in ("log.txt", "sub/greeting.txt")}


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(
    "kill_at",
    [("command_started", 2), ("command_finished", 2), ("model_replied", 3), ("command_started", 4)],
    ids=["in-a-command", "after-a-command", "after-a-reply", "late"],
)
def test_a_killed_run_resumed_ends_as_an_uninterrupted_one(repo: Path, tmp_path: Path, sandbox: str, kill_at):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    model = f"scripted:{script}"
    assert _solve(repo, model, sandbox) == 0
    expected_files, expected = _files(repo), _prompts(_journal(repo))
    assert expected_files == {"log.txt": "one\ntwo\n", "sub/greeting.txt": "hello from sub\n"}
    git(repo, "clean", "-fdq")

    assert _solve(repo, model, sandbox, kill_at) == -signal.SIGKILL
    done = _resume(repo)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert _files(repo) == expected_files  # step 2's append ran once, the shell kept its cd and export
    events = _journal(repo)
    assert _prompts(events) == expected
    resumed = next(e for e in events if e["type"] == "run_resumed")
    assert resumed["step"] == kill_at[1]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["type"] == "result" and result["status"] == "finished" and result["steps"] == len(REPLIES)
    # The diff and undo cover the whole run, both goes.
    assert sorted(result["files_changed"]) == ["log.txt", "sub/greeting.txt"]
    undo = _cli(repo, "undo")
    undo.communicate(timeout=60)
    assert not (repo / "log.txt").exists() and not (repo / "sub").exists()


def test_a_finished_run_is_not_resumed(repo: Path, tmp_path: Path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    assert _solve(repo, f"scripted:{script}", "host") == 0
    done = _resume(repo)
    assert done.returncode == 2 and "finished: there is nothing to resume" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_restored_state_makes_the_shell_directory_first(tmp_path: Path):
    """The state `__ac_save` writes, sourced by a fresh bash after the folder went: the shell ends up
    there again (a name with a space and a newline, as `printf %q` quotes them)."""
    folder = tmp_path / "a b" / "c\nd"
    save = 'printf "[[ \\$PWD == %q ]] || builtin cd -- %q 2>/dev/null\\n" "$1" "$1"'
    state = subprocess.run(["bash", "-c", save, "_", str(folder)], capture_output=True, text=True, check=True).stdout
    restored = restorable(state + 'declare -- GREETING="hello"\n')
    out = subprocess.run(["bash", "-c", restored + '\nprintf %s "$PWD:$GREETING"'], capture_output=True, text=True)
    assert out.stdout == f"{folder}:hello"


@pytest.mark.parametrize("second_kill", ["command_started", "command_finished"])
def test_a_run_killed_twice_resumes_twice(repo: Path, tmp_path: Path, second_kill: str):
    """Killed again once step 3's command ran (sub/greeting.txt written), the work tree goes back to
    the step's start, which git records without the then empty sub/: the shell's directory is made
    again as its state is restored."""
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    model = f"scripted:{script}"
    assert _solve(repo, model, "host", ("command_started", 2)) == -signal.SIGKILL
    proc = _cli(repo, "resume", "--json", "--ci")
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("type") == second_kill and json.loads(line).get("step") == 3:
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate(timeout=60)
    done = _resume(repo)
    assert done.returncode == 0, done.stderr
    assert _files(repo) == {"log.txt": "one\ntwo\n", "sub/greeting.txt": "hello from sub\n"}
    assert [e["step"] for e in _journal(repo) if e["type"] == "run_resumed"] == [2, 3]


def test_sigterm_says_how_to_resume_and_resume_finishes(repo: Path, tmp_path: Path):
    """A CI job cancelled (SIGTERM) unwinds in order and says how to go on; `resume` then finishes."""
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    proc = _cli(repo, "solve", TASK, "--model", f"scripted:{script}", "--sandbox", "host", "--json", "--ci")
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("type") == "command_started" and event.get("step") == 2:
            proc.send_signal(signal.SIGTERM)
            break
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "resume with: agentcli resume " in out
    done = _resume(repo)
    assert done.returncode == 0, done.stderr
    assert _files(repo) == {"log.txt": "one\ntwo\n", "sub/greeting.txt": "hello from sub\n"}


@pytest.mark.docker
@pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")
def test_resume_in_docker(repo: Path, tmp_path: Path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    assert _solve(repo, f"scripted:{script}", "docker", ("command_started", 2)) == -signal.SIGKILL
    done = _resume(repo)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert _files(repo) == {"log.txt": "one\ntwo\n", "sub/greeting.txt": "hello from sub\n"}


@pytest.mark.llamacpp
@pytest.mark.slow
def test_the_real_model_resumed_replies_as_it_did(failing_repo: Path):
    """The embedded 1.5B at temperature 0, killed once its first command ran: resumed, it is sent that
    step's prompt exactly as journaled and replies word for word as it did; the run then goes on to
    its end."""
    from agentcli.models import store

    try:
        store.pull("local/qwen2.5-coder-1.5b", progress=False)
    except Exception as exc:  # whatever keeps the model away, the test cannot run
        pytest.skip(f"the 1.5B model cannot be obtained: {exc}")
    repo = failing_repo
    proc = _cli(repo, "solve", "Fix the failing test.", "--model", "local/qwen2.5-coder-1.5b", "--sandbox", "host",
                "--json", "--ci", "--max-steps", "6")  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("type") == "result" or (event.get("type") == "command_finished" and event["step"] >= 1):
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate(timeout=600)
    if proc.returncode != -signal.SIGKILL:
        pytest.skip("the model finished before its first command")
    killed = _journal(repo)
    first_reply = next(e["text"] for e in killed if e["type"] == "model_replied")

    done = _resume(repo, timeout=600)  # up to five replies of the real model on two busy cores
    assert done.returncode in (0, 1), done.stderr  # finished, or failed at a limit: the run went on to its end
    events = _journal(repo)
    after = events[next(i for i, e in enumerate(events) if e["type"] == "run_resumed") :]
    again = [e for e in after if e["type"] == "model_replied"]
    assert again and again[0]["text"] == first_reply
    assert _prompts(events)[0] == _prompts(killed)[0]
    assert events[-1]["type"] == "result"


def test_a_resumed_run_holds_the_failures_it_caused_against_done(repo: Path, tmp_path: Path):
    """The tests that fail before the task (excused on a task that does not speak of them) are those of
    the task's checkpoint, not of the tree the killed run left."""
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "calc")
    script = tmp_path / "replies.json"
    replies = [
        "```bash\nprintf 'def add(a, b):\\n    return 1\\n' > calc.py && printf '1\\n' > count.txt\n```",
        "```bash\nsleep 4; cat count.txt\n```",
        "DONE: counted",
        "DONE: counted",
        "DONE: counted",
    ]
    script.write_text(json.dumps(replies))
    task = "How many functions are there? Write just the number to count.txt."
    proc = _cli(repo, "solve", task, "--model", f"scripted:{script}", "--sandbox", "host", "--json", "--ci")
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("type") == "command_started" and json.loads(line).get("step") == 2:
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate(timeout=120)
    done = _resume(repo)
    objections = [e["message"] for e in _journal(repo) if e["type"] == "format_error"]
    assert any("the repository's tests fail" in o and "test_add" in o for o in objections), done.stdout[-2000:]
    # Its DONE stood while the tests it broke fail: the resumed run ends as solve would have.
    result = json.loads(done.stdout.splitlines()[-1])
    assert (done.returncode, result["status"]) == (1, "failed"), result
    assert result["standing_doubt"] == "the repository's tests fail", result
