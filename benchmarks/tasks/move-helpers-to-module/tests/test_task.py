"""Outcome checks for move-helpers-to-module."""

import json
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

INDEX = [
    "/posts/hello-world.html  This is the very first post on this b...",
    "/posts/git-rebase-vs-merge.html  Short answer: it depends.",
    "/posts/10-tips-for-faster-tests.html  Run fewer things, mock the network, a...",
]


def run(*args, cwd=WORKDIR):
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    return proc.stdout


def test_helpers_live_in_textutils():
    out = run(
        "-c",
        "import json, textutils, utils; print(json.dumps(["
        "textutils.slugify('  A/B Testing 101 '), textutils.truncate('x' * 20, 8), textutils.truncate('abc'),"
        "sorted(n for n in ('slugify', 'truncate', 'read_json', 'write_json') if hasattr(utils, n))]))",
    )
    slug, cut, short, left_in_utils = json.loads(out)
    assert slug == "a-b-testing-101"
    assert cut == "xxxxx..."
    assert short == "abc"
    assert left_in_utils == ["read_json", "write_json"]


def test_blog_index_still_works():
    assert run("blog.py", "posts.json").splitlines() == INDEX


def test_feed_still_works(tmp_path):
    out = tmp_path / "feed.json"
    run(str(WORKDIR / "feed.py"), str(WORKDIR / "posts.json"), str(out), cwd=tmp_path)
    items = json.loads(out.read_text())["items"]
    assert [item["id"] for item in items] == ["hello-world", "git-rebase-vs-merge", "10-tips-for-faster-tests"]
    assert items[0]["summary"] == "This is the very first post on this blog, and it is mostl..."


def test_repo_tests_pass():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
