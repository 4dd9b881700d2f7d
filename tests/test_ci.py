"""Headless runs as CI systems make them: stdin closed, CI=true, branches, patches, signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.conftest import FIX_REPLIES, git
from tests.test_solve import _environment

DOCS = Path(__file__).resolve().parent.parent / "docs"


def headless(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=_environment(cwd, {"CI": "true", **(env or {})}),
    )


def test_finish_gives_exit_0_patch_and_branch_without_the_users_work(failing_repo: Path, write_replies, tmp_path):
    repo = failing_repo
    (repo / "test_calc.py").write_text((repo / "test_calc.py").read_text() + "# my uncommitted edit\n")
    (repo / "scratch.txt").write_text("mine\n")
    patch = tmp_path / "change.patch"
    result = headless(
        "solve",
        "fix the failing test",
        "--model",
        write_replies(FIX_REPLIES),
        "--sandbox",
        "host",
        "--json",
        "--branch",
        "fix/add",
        "--output-patch",
        str(patch),
        cwd=repo,
    )
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["type"] == "result" and final["status"] == "finished"
    assert final["branch"] == "fix/add" and final["files_changed"] == ["calc.py"] and final["patch"] == str(patch)
    assert "\x1b[" not in result.stderr  # no colour codes in headless logs
    # The commit holds the agent's change on top of HEAD, and nothing of the user's.
    assert git(repo, "rev-parse", "fix/add^") == git(repo, "rev-parse", "HEAD")
    assert git(repo, "diff", "--name-only", "HEAD", "fix/add").split() == ["calc.py"]
    assert "# my uncommitted edit" not in git(repo, "show", "fix/add:test_calc.py")
    # The user's work is intact in the working tree, beside the applied change.
    assert (repo / "test_calc.py").read_text().endswith("# my uncommitted edit\n")
    assert (repo / "scratch.txt").read_text() == "mine\n"
    assert (repo / "calc.py").read_text().endswith("a + b\n")
    # The patch applies to a clean checkout of HEAD and gives the same file.
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=clean, check=True)
    assert (clean / "calc.py").read_text() == (repo / "calc.py").read_text()


def test_no_apply_leaves_the_tree_as_it_was(failing_repo: Path, write_replies):
    result = headless(
        "solve",
        "fix",
        "--model",
        write_replies(FIX_REPLIES),
        "--sandbox",
        "host",
        "--branch",
        "auto",
        "--no-apply",
        cwd=failing_repo,
    )
    assert result.returncode == 0, result.stderr
    assert git(failing_repo, "status", "--porcelain") == ""
    assert "agentcli/fix" in git(failing_repo, "branch", "--list", "agentcli/*")


def test_detached_head_in_a_shallow_clone(failing_repo: Path, write_replies, tmp_path):
    (failing_repo / "more.txt").write_text("second commit\n")
    git(failing_repo, "add", ".")
    git(failing_repo, "commit", "-qm", "second")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{failing_repo}", str(shallow)], check=True)
    git(shallow, "checkout", "-q", "--detach", "HEAD")
    result = headless(
        "solve", "fix", "--model", write_replies(FIX_REPLIES), "--sandbox", "host", "--branch", "ci-fix", cwd=shallow
    )
    assert result.returncode == 0, result.stderr
    assert git(shallow, "rev-parse", "ci-fix^").strip() == git(shallow, "rev-parse", "HEAD").strip()


def test_step_limit_exit_1_and_bad_flags_exit_2(failing_repo: Path, write_replies):
    replies = [f"```bash\necho {i}\n```" for i in range(5)]
    limited = headless(
        "solve", "x", "--model", write_replies(replies), "--sandbox", "host", "--max-steps", "2", cwd=failing_repo
    )
    assert limited.returncode == 1
    bad = headless("solve", "x", "--timeout", "soon", cwd=failing_repo)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    existing = headless("solve", "x", "--branch", "master", "--sandbox", "host", cwd=failing_repo)
    assert existing.returncode == 2 and "already exists" in existing.stderr


def test_sigterm_ends_promptly_and_leaves_no_process(failing_repo: Path, write_replies):
    replies = ["```bash\nsleep 37.25 & sleep 37.25\n```", "DONE: never"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcli",
            "solve",
            "wait",
            "--model",
            write_replies(replies),
            "--sandbox",
            "host",
            "--json",
        ],
        cwd=failing_repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(failing_repo, {"CI": "true"}),
    )
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["type"] == "command_started":
            break
        assert time.monotonic() < deadline
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    rest = proc.stdout.read()
    code = proc.wait(timeout=20)
    assert time.monotonic() - sent < 10
    assert code == 130
    assert json.loads(rest.splitlines()[-1])["status"] == "interrupted"
    leftovers = subprocess.run(["pgrep", "-f", "sleep 37.25"], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""


def test_ci_docs_examples_parse_and_have_the_steps():
    github = yaml.safe_load((DOCS / "examples" / "github-actions.yml").read_text())
    steps = [step for job in github["jobs"].values() for step in job["steps"]]
    text = json.dumps(steps)
    assert "actions/checkout" in text and "pip install" in text and "agentcli solve" in text
    assert "upload-artifact" in text and "--output-patch" in text and "gh pr create" in text
    gitlab = yaml.safe_load((DOCS / "examples" / "gitlab-ci.yml").read_text())
    job = next(v for v in gitlab.values() if isinstance(v, dict) and "script" in v)
    assert any("agentcli solve" in line for line in job["script"]) and "artifacts" in job
    assert os.path.exists(DOCS / "ci.md")


def test_output_redirected_into_the_repo_stays_out_of_the_change(failing_repo: Path, write_replies):
    events = failing_repo / "events.jsonl"
    with open(events, "w") as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentcli",
                "solve",
                "fix",
                "--model",
                write_replies(FIX_REPLIES),
                "--sandbox",
                "host",
                "--json",
                "--branch",
                "auto",
                "--output-patch",
                "change.patch",
            ],
            cwd=failing_repo,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env=_environment(failing_repo, {"CI": "true"}),
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    final = json.loads(events.read_text().splitlines()[-1])
    assert final["files_changed"] == ["calc.py"] and final["branch"]
    assert "events.jsonl" not in (failing_repo / "change.patch").read_text()
    undo = subprocess.run(
        [sys.executable, "-m", "agentcli", "undo"],
        cwd=failing_repo,
        capture_output=True,
        text=True,
        env=_environment(failing_repo, {}),
    )
    assert undo.returncode == 0 and events.exists() and (failing_repo / "change.patch").exists()
