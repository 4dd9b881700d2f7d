"""Outcome checks for git-apply-mailed-patch."""

import os
import subprocess
import sys
import unicodedata
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EMAIL = "lucia.fernandez@example.com"


def git(*args):
    proc = subprocess.run(["git", *args], cwd=WORKDIR, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def ascii_fold(text):
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower().strip()


def contributor_commits():
    out = git("log", "--format=%H%x00%an%x00%ae%x00%s", "HEAD")
    commits = []
    for line in out.splitlines():
        sha, name, email, subject = line.split("\x00")
        if email.lower() == EMAIL:
            commits.append((sha, name, subject))
    return commits


def test_commit_by_the_contributor():
    commits = contributor_commits()
    assert len(commits) == 1, f"want one commit authored by {EMAIL} on the current branch, got {commits}"
    _sha, name, subject = commits[0]
    assert ascii_fold(name) == "lucia fernandez"
    assert "Add Spanish and Italian greetings" in subject


def test_commit_contains_the_change():
    commits = contributor_commits()
    assert commits
    sha = commits[0][0]
    changed = sorted(git("diff", "--name-only", f"{sha}~1", sha).split())
    assert changed == ["README.md", "greet.py"]
    assert '"es": "Hola"' in git("show", f"{sha}:greet.py")
    assert "en, fr, de, es, it." in git("show", f"{sha}:README.md")


def test_greet_works():
    for lang, want in (("es", "Hola, Ana!"), ("it", "Ciao, Ana!"), ("fr", "Bonjour, Ana!")):
        proc = subprocess.run(
            [sys.executable, "greet.py", "Ana", lang],
            cwd=WORKDIR,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.stdout.strip() == want, proc.stderr[-1000:]
