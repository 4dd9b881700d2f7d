"""The embedded 1.5B model, through the loop and a real sandbox, completes a trivial task by itself."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from agentcli.sandbox.local import bwrap_available
from tests.conftest import git

pytestmark = [pytest.mark.llamacpp, pytest.mark.slow]

MODEL = "local/qwen2.5-coder-1.5b"


def _model_ready() -> str | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return "llama-cpp-python is not installed"
    from agentcli.models import store

    if not store.resolve(MODEL).path.is_file():
        return f"{MODEL} is not pulled (agentcli models pull {MODEL})"
    return None


@pytest.mark.skipif(_model_ready() is not None, reason=_model_ready() or "")
def test_real_model_creates_a_file_and_finishes(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# notes\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    sandbox = "bwrap" if bwrap_available() else "host"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentcli",
            "solve",
            "Create a file named hello.txt containing exactly: hello world",
            "--model",
            MODEL,
            "--sandbox",
            sandbox,
            "--json",
            # Room for all three attempts: greedy decoding sometimes answers `touch hello.txt` and insists
            # past the empty-file objection (the prompt holds the work dir, so it varies with the tmp path),
            # and that attempt is then tried afresh, sampling; the second can insist the same way.
            "--max-steps",
            "24",
            "--timeout",
            "900",
        ],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "AGENTCLI_CONFIG_DIR": str(tmp_path / "config")},
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    result = events[-1]
    assert result["type"] == "result", done.stderr
    assert result["status"] == "finished", result
    assert done.returncode == 0
    assert (repo / "hello.txt").read_text().strip() == "hello world"
    assert any(e["type"] == "model_replied" and (e["prompt_evaluated"] or 0) < e["prompt_tokens"] for e in events[2:])


@pytest.mark.skipif(_model_ready() is not None, reason=_model_ready() or "")
def test_an_opened_command_block_is_not_left_empty() -> None:
    from agentcli.models.llamacpp import load_local_model

    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Repeat exactly, with nothing else:\n```bash\n```"},
    ]
    model = load_local_model(MODEL, n_ctx=2048, nonempty_blocks=False)
    model.load().reset()
    free = model.complete(messages, max_tokens=40).text
    model.nonempty_blocks = True
    model.load().reset()
    ruled = model.complete(messages, max_tokens=40).text
    empty = re.compile(r"```\w*\s*(```|\Z)")
    assert empty.match(free.strip()), free  # greedy, the 1.5B answers with an empty block
    assert not empty.search(ruled) and len(ruled.strip()) > 10, ruled


@pytest.mark.docker
@pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")
@pytest.mark.skipif(_model_ready() is not None, reason=_model_ready() or "")
def test_real_model_fixes_a_bug_with_the_tests_choosing_between_two_replies(failing_repo: Path, tmp_path: Path):
    """The 1.5B under the reply grammar, two candidates where it writes the fix: each is judged by the
    repository's tests, the second shares the first's evaluated prompt, and no reply is malformed.

    In Docker, as the benchmarks run: the prompt holds the work dir, and the 1.5B's greedy replies turn
    on it; on the host, pytest's numbered temporary folders sent some runs another way (and they
    failed), while in the container the work dir is always the same. The steps leave room for a
    second attempt where the first ends without a change."""
    done = subprocess.run(
        [
            sys.executable, "-m", "agentcli", "solve", "Fix the failing test.", "--model", MODEL,
            "--sandbox", "docker", "--json", "--candidates", "2", "--max-steps", "24", "--timeout", "900",
        ],
        cwd=failing_repo, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1200,
        env={**os.environ, "AGENTCLI_CONFIG_DIR": str(tmp_path / "config")},
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "result", done.stderr
    scored = [e for e in events if e["type"] == "candidate_scored"]
    assert scored, events
    step = [e for e in scored if e["step"] == scored[0]["step"]]  # the first step that chose
    assert sum(e["chosen"] for e in step) == 1, step
    # Every draw after the first reply (a candidate, or a repeat drawn again) reused the evaluated prompt.
    drawn = [e for e in step if e["repeated"] or e["index"] > 0]
    assert drawn and all(e["prompt_evaluated"] is not None and e["prompt_evaluated"] <= 1 for e in drawn), step
    assert not [e for e in events if e["type"] == "format_error" and not e["verdict"]]
    assert events[-1]["status"] == "finished" and done.returncode == 0, events[-1]
    assert "a + b" in (failing_repo / "calc.py").read_text()
