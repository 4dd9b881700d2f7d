"""A task's work dir: a fresh copy of `repo/` committed with git, and the tests copied in afterwards."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# A bare, fixed git identity: two tasks commit, and the user's git config must not leak in.
GIT_NAME = "agentcli"
GIT_EMAIL = "agentcli@localhost"
GIT_ENV = {
    "GIT_AUTHOR_NAME": GIT_NAME,
    "GIT_AUTHOR_EMAIL": GIT_EMAIL,
    "GIT_COMMITTER_NAME": GIT_NAME,
    "GIT_COMMITTER_EMAIL": GIT_EMAIL,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache")


def harness_env(**extra: str) -> dict[str, str]:
    """The environment the harness runs git, solutions and tests with."""
    env = dict(os.environ)
    env.update(GIT_ENV)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def git(workdir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=workdir, env=harness_env(), check=True, capture_output=True, text=True, timeout=60
    )
    return proc.stdout


@dataclass
class Workspace:
    """Where one task runs: `root/work` is the agent's repository, `root/tests` the copied tests."""

    root: Path
    initial_commit: str = ""

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    @property
    def tests(self) -> Path:
        return self.root / "tests"


def prepare(repo: Path, root: Path) -> Workspace:
    """Copy `repo` to `root/work`, `git init`, set the identity in the repository, commit everything."""
    ws = Workspace(root)
    shutil.copytree(repo, ws.workdir, ignore=COPY_IGNORE, symlinks=True)
    git(ws.workdir, "-c", "init.defaultBranch=main", "init", "-q")
    # In the repository's own config, so commits made by the agent (any process, any sandbox) work too.
    git(ws.workdir, "config", "user.name", GIT_NAME)
    git(ws.workdir, "config", "user.email", GIT_EMAIL)
    git(ws.workdir, "config", "commit.gpgsign", "false")
    git(ws.workdir, "add", "-A")
    git(ws.workdir, "commit", "-q", "--allow-empty", "-m", "Initial commit")
    ws.initial_commit = git(ws.workdir, "rev-parse", "HEAD").strip()
    return ws


def install_tests(tests: Path, ws: Workspace) -> Path:
    """Copy the task's tests next to (never into) the work dir, once the agent is done."""
    shutil.copytree(tests, ws.tests, ignore=COPY_IGNORE, symlinks=True)
    return ws.tests


def changes_patch(ws: Workspace) -> str:
    """Everything that differs from the initial commit, untracked files included, as a patch. The
    agent wrote the work dir: git runs there hardened (`repo/git.py`), through a throwaway index, so
    the repository's own index stays as the agent left it."""
    from agentcli.repo.checkpoint import scratch_index
    from agentcli.repo.git import Git, GitError

    try:
        git = Git(ws.workdir)
        with scratch_index() as env:
            git("read-tree", ws.initial_commit, env=env)
            git("add", "-A", env=env)
            patch = git("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", ws.initial_commit, env=env)
    except (GitError, OSError) as e:
        return f"# could not compute the change: {e}\n"
    return patch + "\n" if patch else patch


def snapshot(workdir: Path) -> dict[str, str]:
    """Content and mode of every file in workdir (git internals included, except the index's stat cache)."""
    state: dict[str, str] = {}
    for path in sorted(workdir.rglob("*")):
        rel = path.relative_to(workdir).as_posix()
        if rel == ".git/index" or (path.is_dir() and not path.is_symlink()):
            continue
        if path.is_symlink():
            state[rel] = "link:" + os.readlink(path)
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        state[rel] = f"{path.stat().st_mode:o}:{digest}"
    return state
