"""Attacks by a model that controls the commands, end to end through `agentcli solve`, on each sandbox.

Everything the sandbox can write (the work tree, `.git`, the control channel) is untrusted: each test
plants something there as an attacker would, then checks that nothing reached the host, the user's
next git command or agentcli's own files, that the run still ended with its journal, and that
`agentcli undo` gave the user's work back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.sandbox.factory import docker_ready
from agentcli.sandbox.local import bwrap_available
from agentcli.session.journal import sessions_dir
from tests.conftest import containers_labelled, git
from tests.test_solve import agentcli, tree_digest

DOCKER = pytest.param(
    "docker",
    marks=[pytest.mark.docker, pytest.mark.skipif(not docker_ready(), reason="no Docker engine answers here")],
)
BWRAP = pytest.param(
    "bwrap",
    marks=[pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")],
)
CHANNEL = "/run/agentcli/commands"
SECRET = "SECRET-MARKER-7f3a91"
ENV_SECRET = "sk-ENVMARKER-5c2e"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the user's work in every state: committed, modified, staged, untracked, ignored."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def greet():\n    return 'hi'\n")
    (repo / "README.md").write_text("# app\n")
    (repo / ".gitignore").write_text(".env\ndata/\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "app.py").write_text("def greet():\n    return 'hello'\n")  # modified, not staged
    (repo / "README.md").write_text("# app\n\nstaged line\n")
    git(repo, "add", "README.md")  # staged
    (repo / "notes.txt").write_text("my notes\n")  # untracked
    (repo / ".env").write_text("TOKEN=mine\n")  # ignored
    (repo / "data").mkdir()
    (repo / "data" / "rows.csv").write_text("a,b\n1,2\n")  # ignored folder
    return repo


def replies(tmp_path: Path, *texts: str) -> str:
    path = tmp_path / f"replies-{len(list(tmp_path.glob('replies-*')))}.json"
    path.write_text(json.dumps(list(texts)))
    return f"scripted:{path}"


def bash(command: str) -> str:
    return f"```bash\n{command}\n```"


def solve(repo: Path, model: str, backend: str, *extra: str, env: dict[str, str | None] | None = None):
    result = agentcli("solve", "tidy up", "--model", model, "--sandbox", backend, "--json", *extra, cwd=repo, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert events and events[-1]["type"] == "result", result.stderr
    journal = sessions_dir(repo) / events[-1]["session_id"] / "events.jsonl"
    assert journal.is_file()
    return result, events, journal.read_text()


def user_state(repo: Path) -> tuple[dict[str, str], str, str, str]:
    """The files (ignored ones included), `git status`, HEAD and the staged tree."""
    return (
        tree_digest(repo),
        git(repo, "status", "--porcelain", "--ignored"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "write-tree"),
    )


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_links_planted_in_the_channel_and_the_repository_are_never_followed(repo: Path, tmp_path: Path, backend: str):
    secret = tmp_path / "host-secret.txt"
    secret.write_text(f"def broken(:\n{SECRET}\n")
    target = tmp_path / "host-target.sh"
    target.write_text("original\n")
    plant = (
        f"for i in $(seq 1 60); do n=$(printf %04d $i); ln -sf {target} {CHANNEL}/$n.sh; "
        f"if [ $((i % 2)) = 0 ]; then ln -sf {secret} {CHANNEL}/$n.out; "
        f"else ln -sf /proc/self/environ {CHANNEL}/$n.out; fi; done; "
        f"ln -sf {secret} leak.py; ln -sf {secret} app.py; ln -sf /proc/self/environ env.txt; "
        # agentcli's checkpoint refs in the repository pointed at a state of the attacker's making
        "evil=$(echo pwned | git hash-object -w --stdin); "
        "tree=$(printf '100644 blob %s\\tapp.py\\n' $evil | git mktree); "
        "c=$(git commit-tree $tree -m evil); for r in $(git for-each-ref --format='%(refname)' refs/agentcli); "
        "do git update-ref $r $c; done; echo planted"
    )
    model = replies(tmp_path, bash(plant), bash("echo next"), bash("env; cat env.txt"), "DONE: tidied.")
    before = user_state(repo)
    result, events, journal = solve(repo, model, backend, env={"OPENAI_API_KEY": ENV_SECRET})
    assert target.read_text() == "original\n"  # no command file was written through a link
    for text in (journal, result.stdout, result.stderr):
        assert SECRET not in text and ENV_SECRET not in text
    channel = sessions_dir(repo) / events[-1]["session_id"] / "commands"
    assert any(path.is_symlink() for path in channel.iterdir())  # the attack did happen
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before
    assert secret.read_text() == f"def broken(:\n{SECRET}\n"


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_the_sandbox_sees_none_of_agentclis_secrets(repo: Path, tmp_path: Path, backend: str):
    model = replies(tmp_path, bash("env; cat /proc/1/environ | tr '\\0' '\\n'; echo checked"), "DONE: looked.")
    env = {"OPENAI_API_KEY": ENV_SECRET, "AGENTCLI_SECRET_SETTING": ENV_SECRET, "MY_PASSWORD": ENV_SECRET}
    _, events, journal = solve(repo, model, backend, env=env)
    shown = next(e["output"] for e in events if e["type"] == "command_finished" and "checked" in e["output"])
    assert "HOME=" in shown  # the environment was shown...
    assert ENV_SECRET not in journal  # ...without any of the secrets


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_a_watchdog_fifo_replaced_by_a_link_is_not_written_through(repo: Path, tmp_path: Path, backend: str):
    target = tmp_path / "host-target.txt"
    target.write_text("original\n")
    plant = f"for i in 1 2 3; do ln -sf {target} {CHANNEL}/watchdog.$i; done; mkdir -p {CHANNEL}/0004.sh; kill -9 $$"
    model = replies(tmp_path, bash(plant), bash("echo after restart"), "DONE: done.")
    _, events, _ = solve(repo, model, backend)
    assert any(e["type"] == "command_finished" and "after restart" in e["output"] for e in events)
    assert target.read_text() == "original\n"


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_git_settings_planted_in_the_sandbox_run_nothing_on_the_host(repo: Path, tmp_path: Path, backend: str):
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    config_before = (repo / ".git" / "config").read_bytes()
    attack = "; ".join(
        [
            f"git config filter.evil.clean 'touch {pwned}/filter; cat'",
            "echo '* filter=evil diff=evil' > .gitattributes",
            f"git config diff.evil.textconv 'touch {pwned}/textconv; cat'",
            f"git config core.fsmonitor 'touch {pwned}/fsmonitor; false'",
            f"printf '#!/bin/sh\\ntouch {pwned}/hook\\n' > .git/hooks/pre-commit",
            f"printf '#!/bin/sh\\ntouch {pwned}/refhook\\n' > .git/hooks/reference-transaction",
            "chmod +x .git/hooks/* 2>/dev/null",
            "echo '*.py filter=evil' > .git/info/attributes",
            "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/",
            f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch {pwned}/commondir\\n'"
            " > evil/config",
            "echo ../evil > .git/commondir",
            "git replace -f HEAD HEAD 2>/dev/null",
            "echo changed >> app.py; echo done",
        ]
    )
    model = replies(tmp_path, bash(attack), "DONE: tidied.")
    _, events, _ = solve(repo, model, backend)
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    # The user's own git afterwards, with hooks and all: still nothing planted runs.
    git(repo, "status")
    git(repo, "diff")
    git(repo, "commit", "-qam", "the user's next commit")
    assert sorted(p.name for p in pwned.iterdir()) == []
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".git" / "commondir").exists()
    assert not (repo / ".git" / "info" / "attributes").exists()
    notices = " ".join(e.get("message", "") for e in events if e["type"] == "notice")
    assert ".git/commondir" in notices  # removed at the end of the run, and said so


def test_git_settings_changed_on_the_host_backend_are_reported_and_undone(repo: Path, tmp_path: Path):
    """`--sandbox host` isolates nothing, but agentcli's own git still runs nothing planted, the change
    is reported, and undo takes it back."""
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    config_before = (repo / ".git" / "config").read_bytes()
    attack = (
        f"git config core.fsmonitor 'touch {pwned}/fsmonitor; false' && "
        f"printf '#!/bin/sh\\ntouch {pwned}/hook\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && "
        f"git config filter.evil.clean 'touch {pwned}/filter; cat' && echo '* filter=evil' > .gitattributes"
    )
    model = replies(tmp_path, bash(attack), "DONE: tidied.")
    result, events, _ = solve(repo, model, "host")
    assert "warning: --sandbox host" in result.stderr
    assert sorted(p.name for p in pwned.iterdir()) == []  # agentcli's own git calls ran none of it
    notices = " ".join(e.get("message", "") for e in events if e["type"] == "notice")
    assert ".git/config" in notices and ".git/hooks/pre-commit" in notices
    assert agentcli("undo", cwd=repo).returncode == 0
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    git(repo, "commit", "-qam", "the user's next commit")
    assert sorted(p.name for p in pwned.iterdir()) == []


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_git_clean_and_rm_rf_git_are_survivable(repo: Path, tmp_path: Path, backend: str):
    before = user_state(repo)
    log_before = git(repo, "log", "--format=%H %s")
    wipe = "git clean -fdx; git update-ref -d HEAD; git gc --prune=now -q; rm -rf .git; ls -A .git; echo wiped"
    model = replies(tmp_path, bash(wipe), bash("echo still here"), "DONE: tidied.")
    result, events, _ = solve(repo, model, backend)
    assert result.returncode in (0, 1)
    assert any(e["type"] == "command_finished" and "still here" in e["output"] for e in events)
    assert not (repo / ".env").exists()  # the attack did happen
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before
    assert git(repo, "log", "--format=%H %s") == log_before
    git(repo, "fsck", "--no-progress")


def test_a_repository_file_cannot_move_the_next_run_out_of_the_sandbox(repo: Path, tmp_path: Path):
    backend = "docker" if docker_ready() else "bwrap"
    if backend == "bwrap" and not bwrap_available():
        pytest.skip("no sandbox here")
    settings = 'sandbox = "host"\\nnetwork = true\\napi_base = "http://127.0.0.1:9/v1"\\n'
    plant = f"printf '{settings}' > .agentcli.toml"
    model = replies(tmp_path, bash(plant), "DONE: tidied.")
    solve(repo, model, backend)
    assert "host" in (repo / ".agentcli.toml").read_text()
    result = agentcli("solve", "tidy up", "--model", replies(tmp_path, "DONE: nothing."), "--json", cwd=repo)
    started = [json.loads(line) for line in result.stdout.splitlines() if '"run_started"' in line]
    assert started and started[0]["sandbox"] in ("docker", "bwrap")
    assert ".agentcli.toml" in result.stderr and "sandbox" in result.stderr and "ignored" in result.stderr


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_write_and_read_through_a_planted_link_are_refused(tmp_path: Path, backend: str):
    from agentcli import untrusted
    from agentcli.sandbox.docker import DockerSandbox
    from agentcli.sandbox.local import BwrapSandbox

    repo = tmp_path / "work"
    repo.mkdir()
    host_file = tmp_path / "host.txt"
    host_file.write_text(f"{SECRET}\n")
    cls = DockerSandbox if backend == "docker" else BwrapSandbox
    box = cls(repo, tmp_path / "state" / "sessions" / "s" / "commands")
    box.start()
    try:
        box.run(f"ln -s {host_file} link.txt; mkdir real; ln -s {tmp_path} real/up", timeout=30)
        for path in ("link.txt", f"{box.workdir}/link.txt", "real/up/host.txt"):
            with pytest.raises(untrusted.NotAFile):
                box.write_file(path, "overwritten\n")
            with pytest.raises(untrusted.NotAFile):
                box.read_file(path)
        box.write_file("real/new.txt", "fine\n")
        assert box.run("cat real/new.txt", timeout=30).output == "fine\n"
    finally:
        box.close()
    assert host_file.read_text() == f"{SECRET}\n"


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_nothing_outlives_a_killed_agentcli(repo: Path, tmp_path: Path, backend: str):
    model = replies(tmp_path, bash("sleep 97.31"), "DONE: slept.")
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(repo / ".no-user-config")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "solve", "wait", "--model", model, "--sandbox", backend, "--json"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"command_started"' in line and "sleep 97.31" in line:
            break
    time.sleep(1)
    assert _sleepers() or (backend == "docker" and containers_labelled("org.agentcli.owner-pid", proc.pid))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
        _sleepers() or (backend == "docker" and containers_labelled("org.agentcli.owner-pid", proc.pid))
    ):
        time.sleep(0.2)
    assert not _sleepers()
    if backend == "docker":
        assert not containers_labelled("org.agentcli.owner-pid", proc.pid)


def _sleepers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", b"97.31"]:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# Found by a review of the first version of this suite: each is an attack that worked then.


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_a_link_planted_for_a_protected_git_folder_stops_the_next_run(repo: Path, tmp_path: Path, backend: str):
    secret_dir = tmp_path / "host-keys"
    secret_dir.mkdir()
    (secret_dir / "id_test").write_text(f"{SECRET}\n")
    (repo / ".git" / "modules").rmdir() if (repo / ".git" / "modules").is_dir() else None
    os.symlink(secret_dir, repo / ".git" / "modules")  # as a run on the host backend could leave it
    result = agentcli(
        "solve", "look", "--model", replies(tmp_path, bash("cat .git/modules/id_test")), "--sandbox", backend, cwd=repo
    )
    assert result.returncode == 2 and ".git/modules is not a plain folder" in result.stderr
    assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("backend", [BWRAP])
def test_planted_commondir_goes_even_when_the_checkpoint_objects_do(repo: Path, tmp_path: Path, backend: str):
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    attack = "; ".join(
        [
            "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/",
            f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch {pwned}/commondir\\n'"
            " > evil/config",
            "echo ../evil > .git/commondir",
            # every loose object of the repository gone, the checkpoint's own included
            "find .git/objects -type f -delete; echo done",
        ]
    )
    solve(repo, replies(tmp_path, bash(attack), "DONE: tidied."), backend)
    assert not (repo / ".git" / "commondir").exists()
    assert agentcli("undo", cwd=repo).returncode == 0
    git(repo, "status")
    assert sorted(p.name for p in pwned.iterdir()) == []


@pytest.mark.parametrize("backend", [BWRAP])
def test_undo_keeps_files_the_run_made_ignored_and_survives_a_fifo_in_git(repo: Path, tmp_path: Path, backend: str):
    before = user_state(repo)
    attack = (
        "printf 'notes.txt\\napp.py\\n' >> .gitignore && git rm -q --cached app.py && "
        "rm -f .git/packed-refs && mkfifo .git/packed-refs && echo done"
    )
    solve(repo, replies(tmp_path, bash(attack), "DONE: tidied."), backend)
    undo = agentcli("undo", cwd=repo, timeout=60)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before
    assert (repo / "notes.txt").read_text() == "my notes\n"


def test_the_checkpoint_copy_takes_branch_names_that_clash_with_older_ones(repo: Path, tmp_path: Path):
    git(repo, "branch", "feature/a")
    solve(repo, replies(tmp_path, bash("echo one"), "DONE: fine."), "host")
    git(repo, "branch", "-D", "feature/a")
    git(repo, "branch", "feature")
    _, events, _ = solve(repo, replies(tmp_path, bash("echo two"), "DONE: fine."), "host")
    assert any(e["type"] == "command_finished" and e["output"] == "two\n" for e in events)
    assert agentcli("undo", cwd=repo).returncode == 0


@pytest.mark.parametrize("backend", [BWRAP])
def test_a_nested_repository_the_run_made_runs_nothing_in_agentclis_git(repo: Path, tmp_path: Path, backend: str):
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    attack = "; ".join(
        [
            "git init -q sub && cd sub && echo x > f && git add f && git -c user.email=a@b -c user.name=a commit -qm x",
            f"git config filter.ev.clean 'touch {pwned}/filter; cat' && echo '* filter=ev' > .git/info/attributes",
            f"git config core.fsmonitor 'touch {pwned}/fsmonitor; false'",
            "touch -d 2002-01-01 f && cd .. && git add sub && git commit -qm sub; echo done",
        ]
    )
    _, events, _ = solve(repo, replies(tmp_path, bash(attack), "DONE: committed the sub repository."), backend)
    assert sorted(p.name for p in pwned.iterdir()) == []
    assert any("nested git repositories (sub)" in e.get("message", "") for e in events)
    assert agentcli("undo", cwd=repo).returncode == 0
    assert not (repo / "sub").exists()


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_a_nested_repository_with_no_commit_yet_does_not_stop_undo(repo: Path, tmp_path: Path, backend: str):
    before = user_state(repo)
    start = bash("mkdir -p tools && cd tools && git init -q && echo x > f && cd .. && echo 'x = 1' >> app.py")
    _, events, _ = solve(repo, replies(tmp_path, start, "DONE: started tools.", "DONE: tools is begun."), backend)
    assert events[-1]["status"] == "finished", events[-1]
    assert any("nested git repositories (tools)" in e.get("message", "") for e in events)
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before and not (repo / "tools").exists()


# Swaps app.py's blob in the index back to the committed one while keeping the stat data `git add`
# recorded for the changed file, then fixes the index's checksum: git would call app.py unchanged.
FORGE_INDEX = """python3 - <<'PY'
import hashlib, subprocess
run = lambda *a: subprocess.run(a, capture_output=True, text=True, check=True).stdout.strip()
committed = bytes.fromhex(run("git", "rev-parse", "HEAD:app.py"))
run("touch", "-d", "2001-01-01", "app.py")
run("git", "add", "app.py")
changed = bytes.fromhex(run("git", "rev-parse", ":app.py"))
data = open(".git/index", "rb").read()[:-20].replace(changed, committed)
open(".git/index", "wb").write(data + hashlib.sha1(data).digest())
PY"""


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_changes_hidden_from_git_by_the_index_are_still_shown_and_undone(
    repo: Path, tmp_path: Path, backend: str, broken: bool
):
    """`assume-unchanged`, `skip-worktree` and an index forged with a changed file's stat data all
    make git call a file unchanged: agentcli reads the files, so the diff shows them and undo takes them
    back; and undo still does when the index was left unreadable besides."""
    before = user_state(repo)
    attack = (
        "echo 'x = 1' >> notes.txt && git add notes.txt && git update-index --assume-unchanged notes.txt && "
        "echo 'stolen' >> notes.txt && git update-index --skip-worktree README.md && echo 'hidden' >> README.md && "
        f"printf 'def greet():\\n    return 1\\n' > app.py && {FORGE_INDEX}\ngit status --porcelain\n"
        + ("printf garbage > .git/index" if broken else "true")
    )
    _, events, _ = solve(repo, replies(tmp_path, bash(attack), "DONE: tidied."), backend)
    finished = [e for e in events if e["type"] == "command_finished"]
    assert finished[0]["exit_code"] == 0 and "app.py" not in finished[0]["output"], finished[0]["output"]
    if not broken:
        assert sorted(events[-1]["files_changed"]) == ["README.md", "app.py", "notes.txt"]
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before


# Found by a review of the delivery paths (the branch, the patch, undo): each worked before.

# Rewrites the object of the user's untracked notes (what undo would bring back), and plants, under the
# id of app.py's next content, an object holding its present content, before writing that content.
FORGE_OBJECTS = """python3 - <<'PY'
import hashlib, os, subprocess, zlib
def plant(oid, data):
    path = f".git/objects/{oid[:2]}/{oid[2:]}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    open(path, "wb").write(zlib.compress(b"blob %d\\0" % len(data) + data))
notes = subprocess.run(["git", "hash-object", "notes.txt"], capture_output=True, text=True).stdout.strip()
plant(notes, b"forged notes\\n")
old = open("app.py", "rb").read()
new = old + b"import os  # hidden\\n"
plant(hashlib.sha1(b"blob %d\\0" % len(new) + new).hexdigest(), old)
open("app.py", "wb").write(new)
print("forged")
PY"""


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_forged_objects_neither_hide_a_change_nor_come_back_with_undo(repo: Path, tmp_path: Path, backend: str):
    before = user_state(repo)
    _, events, _ = solve(repo, replies(tmp_path, bash(FORGE_OBJECTS), "DONE: tidied."), backend)
    assert next(e["output"] for e in events if e["type"] == "command_finished").strip() == "forged"
    assert "app.py" in events[-1]["diffstat"], events[-1]
    notices = " ".join(e.get("message", "") for e in events if e["type"] == "notice")
    assert "not what it claims" in notices
    undo = agentcli("undo", cwd=repo)
    assert undo.returncode == 0, undo.stderr
    assert user_state(repo) == before and (repo / "notes.txt").read_text() == "my notes\n"


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_links_in_git_folder_are_not_written_through_by_the_branch_the_patch_or_undo(
    repo: Path, tmp_path: Path, backend: str
):
    victim = tmp_path / "victim"
    victim.write_text("a host file\n")
    attack = (
        "name=$(git for-each-ref --format='%(refname)' refs/agentcli/checkpoints | head -n1); name=${name##*/}; "
        "mkdir -p .git/logs/refs/heads .git/logs/refs/agentcli/before-undo && "
        f"ln -s {victim} .git/logs/refs/heads/delivered && ln -s {victim} .git/logs/refs/agentcli/before-undo/$name && "
        f"ln -sf {victim} change.patch && echo 'x = 1' >> app.py && echo planted"
    )
    model = replies(tmp_path, bash(attack), "DONE: tidied.")
    result, events, _ = solve(repo, model, backend, "--branch", "delivered", "--output-patch", "change.patch")
    assert victim.read_text() == "a host file\n"
    assert events[-1]["status"] == "failed" and "patch was not written" in events[-1]["reason"], events[-1]
    assert result.returncode != 0
    notices = " ".join(e.get("message", "") for e in events if e["type"] == "notice")
    assert ".git/logs/refs/heads/delivered" in notices
    assert agentcli("undo", cwd=repo).returncode == 0
    assert victim.read_text() == "a host file\n"


@pytest.mark.parametrize("backend", [DOCKER, BWRAP])
def test_undo_brings_back_the_refs_the_run_deleted_moved_or_added(repo: Path, tmp_path: Path, backend: str):
    git(repo, "branch", "feature")
    git(repo, "tag", "v1")
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    committed = git(repo, "show", "HEAD:app.py")
    attack = (
        "git branch -D feature && git tag -f v1 $(git commit-tree HEAD^{tree} -m moved) && "
        "git replace $(git rev-parse HEAD:app.py) $(echo 'evil()' | git hash-object -w --stdin) && "
        "git checkout -q --detach && echo done"
    )
    solve(repo, replies(tmp_path, bash(attack), "DONE: tidied."), backend)
    assert agentcli("undo", cwd=repo).returncode == 0
    listing = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines(keepends=True)
    now = "".join(line for line in listing if not line.startswith("refs/agentcli/"))
    assert now == refs and "refs/replace" not in now
    assert git(repo, "branch", "--show-current").strip()  # on its branch again, not detached
    assert git(repo, "show", "HEAD:app.py") == committed  # the user's git honours replace refs
