"""Git on the host, run so that nothing the sandbox wrote into the repository runs or steers it.

The work tree and `.git` are the sandbox's to write, and git executes what its configuration and
attributes name: hooks (even `update-ref` runs `reference-transaction`), `core.fsmonitor`, clean and
smudge filters, external diffs and textconv. So every call agentcli makes:
- names the repository explicitly (`GIT_DIR`, `GIT_COMMON_DIR`, `GIT_WORK_TREE`), so a planted
  `.git/commondir` or a `.git` file pointing elsewhere is never followed;
- reads no attributes from the work tree (`GIT_ATTR_SOURCE` is the empty tree) and no replaced
  objects (`refs/replace/` is the sandbox's to write);
- turns off hooks, fsmonitor, every configured filter driver and signing, with settings given on
  the command line's level, which outranks every config file.
Inside the sandbox `.git/config`, `hooks/` and `info/` are mounted read-only besides.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

from agentcli.errors import EXIT_NOT_FINISHED, AgentcliError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# Settings given on every call (the command line's level outranks every config file).
HARDENED = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "gc.auto": "0",
    "maintenance.auto": "false",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "protocol.ext.allow": "never",
    # A nested repository the sandbox made has settings of its own: never step into one.
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "submodule.recurse": "false",
    # A change is found by the files' stat data and by reading them: no setting may weaken either
    # (`repo/snapshot.py`), nor keep the index's parts in `.git` where the sandbox could remove them.
    "core.ignoreStat": "false",
    "core.trustCtime": "true",
    "core.checkStat": "default",
    "core.splitIndex": "false",
    "core.untrackedCache": "false",
    # Nor may an index of the object store the sandbox wrote map an id to other bytes (`objects.py`).
    "core.multiPackIndex": "false",
    "core.commitGraph": "false",
}
# A git call that takes longer is stopped (a FIFO planted in .git would block it for ever).
TIMEOUT_S = 300.0
# Files of the git folder git opens on most calls; a FIFO or device there is refused at once.
_OPENED = ("HEAD", "index", "packed-refs", "config", "commondir", "ORIG_HEAD", "FETCH_HEAD")
_FILTER_KEYS = ("clean", "smudge", "process")


class GitError(AgentcliError):
    """git exited non-zero; `stderr` says why (its last line is the message)."""

    exit_code = EXIT_NOT_FINISHED

    def __init__(self, args: list[str], status: int, stderr: str):
        why = (stderr.strip().splitlines() or ["no message"])[-1][:300]
        super().__init__(f"git {args[0] if args else ''} failed ({status}): {why}")
        self.status = status
        self.stderr = stderr


def git_dirs(root: Path) -> tuple[Path, Path] | None:
    """(git dir, common dir) of the work tree at `root`, found while the repository is still the user's;
    None where `root` is no repository."""
    dot = root / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot, dot
    done = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **_config_env(HARDENED), "GIT_ATTR_SOURCE": EMPTY_TREE},
    )
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2:
        return None
    return Path(lines[0]), Path(lines[1])


def _config_env(settings: dict[str, str]) -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for i, (key, value) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


class Git:
    """Runs git commands in one repository, hardened as the module says."""

    def __init__(self, root: Path, git_dir: Path | None = None, *, work_tree: bool = True):
        """`git_dir`: a repository of agentcli's own (the checkpoint mirror) rather than `root`'s."""
        self.root = root
        if git_dir is not None:
            self.git_dir, self.common_dir = git_dir, git_dir
        else:
            found = git_dirs(root)
            if found is None:
                raise GitError(["rev-parse"], 128, f"{root} is not a git repository")
            self.git_dir, self.common_dir = found
        self._work_tree = work_tree
        self._env: dict[str, str] | None = None
        for name in _OPENED:
            with contextlib.suppress(OSError):
                if not stat.S_ISREG(mode := os.lstat(self.git_dir / name).st_mode) and not stat.S_ISLNK(mode):
                    raise GitError(["open"], 128, f"{self.git_dir / name} is not a regular file")

    @property
    def env(self) -> dict[str, str]:
        if self._env is None:
            base = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF")}
            base |= {
                "GIT_DIR": str(self.git_dir),
                "GIT_COMMON_DIR": str(self.common_dir),
                "GIT_ATTR_SOURCE": EMPTY_TREE,
                "GIT_NO_REPLACE_OBJECTS": "1",
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_OPTIONAL_LOCKS": "0",
            }
            if self._work_tree:
                base["GIT_WORK_TREE"] = str(self.root)
            settings = dict(HARDENED)
            # Filter drivers by name: each configured one is emptied, so no attribute can run it.
            listing = subprocess.run(
                ["git", "config", "--name-only", "--get-regexp", r"^filter\."],
                capture_output=True,
                text=True,
                env={**base, **_config_env(settings)},
                cwd=self.root,
            ).stdout
            for name in sorted({line.split(".", 1)[1].rsplit(".", 1)[0] for line in listing.split() if "." in line}):
                settings |= {f"filter.{name}.{key}": "" for key in _FILTER_KEYS}
                settings[f"filter.{name}.required"] = "false"
            self._env = base | _config_env(settings)
        return self._env

    def __call__(self, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
        """git's stdout, stripped of its last newline; GitError when it fails."""
        try:
            done = subprocess.run(
                ["git", *args],
                input=None if input is None else input.encode(errors="surrogateescape"),
                capture_output=True,
                cwd=self.root,
                env={**self.env, **(env or {})},
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise GitError(list(args), 124, f"stopped after {TIMEOUT_S:g} s") from None
        # Decoded by hand: text mode would read a carriage return in a file name as a line end.
        stdout = done.stdout.decode(errors="surrogateescape")
        if done.returncode != 0:  # some failures are said on stdout ("nothing to commit")
            raise GitError(list(args), done.returncode, done.stderr.decode(errors="replace").strip() or stdout)
        return stdout[:-1] if stdout.endswith("\n") else stdout

    def blob(self, sha: str) -> bytes:
        """A blob's bytes, exactly."""
        return self.raw("cat-file", "blob", sha)

    def blob_within(self, spec: str, limit: int) -> bytes | None:
        """The bytes of the blob `spec` names (a sha, `tree:path`); None where it names none, or one of
        more than `limit` bytes (read only after its size is known)."""
        size = self.try_("cat-file", "-s", spec)
        if size is None or not size.isdigit() or int(size) > limit:
            return None
        try:
            return self.blob(spec)
        except GitError:
            return None

    def raw(self, *args: str, input: bytes | None = None) -> bytes:
        """git with bytes in and out (a blob, a pack); GitError when it fails."""
        try:
            done = subprocess.run(
                ["git", *args], input=input, capture_output=True, cwd=self.root, env=self.env, timeout=TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise GitError(list(args), 124, f"stopped after {TIMEOUT_S:g} s") from None
        if done.returncode != 0:
            raise GitError(list(args), done.returncode, done.stderr.decode(errors="replace"))
        return done.stdout

    def try_(self, *args: str, env: dict[str, str] | None = None) -> str | None:
        """Run and return stdout, or None when git exits non-zero."""
        try:
            return self(*args, env=env)
        except GitError:
            return None
