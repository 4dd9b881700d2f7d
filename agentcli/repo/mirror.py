"""agentcli's own copy of every checkpoint, outside the repository, where the sandbox cannot reach it.

The repository's `.git` is the sandbox's to write: `rm -rf .git`, `git update-ref -d` followed by
`gc`, a deleted object, or a checkpoint ref pointed elsewhere would leave `undo` nothing to trust.
So each checkpoint is also pushed into a bare repository in the repository's state folder
(`paths.repo_state_dir`), with the refs there were (branches, tags, remotes, notes, the stash) under
a namespace of its own (`refs/agentcli/state/<checkpoint>/`): its objects include the staged tree,
the ignored files and git's own settings the checkpoint keeps. `undo` reads checkpoints from here,
and `recover` puts back into the repository whatever objects and refs it lost.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from agentcli.paths import repo_state_dir
from agentcli.repo import objects
from agentcli.repo.git import Git, GitError

MIRROR = "mirror.git"
STATE_REFS = "refs/agentcli/state"
CHECKPOINT_REFS = "refs/agentcli/checkpoints"
# States set aside during a run (an attempt's, in case no later one does better): no checkpoints, so
# undo never sees them. Their commits record the run's own git settings and links: only the in-memory
# state (`checkpoint.set_aside`) swaps in the task checkpoint's, so nothing may load one from here.
ASIDE_REFS = "refs/agentcli/aside"
# The kinds of refs a checkpoint keeps, each as `refs/<kind>/*`. agentcli's own git calls ignore replaced
# objects, but the user's do not: a replace ref the run made would change what their next checkout writes.
KEPT_REFS = ("heads", "tags", "remotes", "notes", "replace")


def location(root: Path) -> Path:
    return repo_state_dir(root) / MIRROR


def repository(root: Path) -> Git | None:
    """The mirror of the repository at `root`, where one exists."""
    path = location(root)
    return Git(root, git_dir=path, work_tree=False) if (path / "HEAD").is_file() else None


def keep(git: Git, name: str, ref: str, commit: str) -> None:
    """Push checkpoint `commit` (as `ref`) and the repository's refs (under the checkpoint's own
    namespace, so no later branch name ever clashes with them) into the mirror."""
    path = location(git.root)
    if not (path / "HEAD").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, capture_output=True)
    specs = [f"+refs/{kind}/*:{STATE_REFS}/{name}/{kind}/*" for kind in KEPT_REFS]
    if git.try_("rev-parse", "-q", "--verify", "refs/stash") is not None:
        specs.append(f"+refs/stash:{STATE_REFS}/{name}/stash")
    # The checkpoint first, the refs after: a shallow clone's push of both at once is refused.
    _push_commit(git, path, commit, ref, take_boundary=True)
    _push(git, path, specs, take_boundary=True)


def set_aside(git: Git, name: str, commit: str) -> bool:
    """Push `commit`, a state set aside, into the mirror as `ASIDE_REFS/name`, so that nothing done to
    the repository's objects afterwards (`gc --prune`, a forged object) loses or changes it. The mirror
    takes no history boundary from the push and no object whose bytes do not match its id. False where
    there is no mirror or the push fails."""
    path = location(git.root)
    if not (path / "HEAD").is_file():
        return False
    try:
        _push_commit(git, path, commit, f"{ASIDE_REFS}/{name}", take_boundary=False)
    except GitError:
        return False
    return True


def _push(git: Git, path: Path, refspecs: list[str], *, take_boundary: bool) -> None:
    """Push `refspecs` into the mirror at `path`. First reading no history boundary (`.git/shallow` is the
    sandbox's to write: one it planted must not cut what is sent): where the history is whole, that push
    goes through and the mirror takes no boundary. Where it is not (a shallow clone), the push reads the
    repository's boundary, and the mirror takes it only where `take_boundary` (a checkpoint's), else
    refuses any new one."""
    no_boundary = "--receive-pack=git -c receive.shallowUpdate=false receive-pack"
    if git.try_("push", "-q", "--no-verify", no_boundary, str(path), *refspecs, env=_NO_SHALLOW) is not None:
        return
    receive = f"--receive-pack=git -c receive.shallowUpdate={str(take_boundary).lower()} receive-pack"
    git("push", "-q", "--no-verify", receive, str(path), *refspecs)


# git reads the repository's history boundary from here instead, in the push and in the processes it starts.
_NO_SHALLOW = {"GIT_SHALLOW_FILE": os.devnull}


def _push_commit(git: Git, path: Path, commit: str, ref: str, *, take_boundary: bool) -> None:
    """Push `commit` into the mirror at `path` as `ref`, and check that it arrived. Named `<id>^{commit}`:
    git's push reads a bare id as a ref name first, and the sandbox can make `refs/tags/<id>`."""
    _push(git, path, [f"+{commit}^{{commit}}:{ref}"], take_boundary=take_boundary)
    arrived = Git(git.root, git_dir=path, work_tree=False).try_("rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
    if arrived != commit:
        raise GitError(["push"], 1, f"{ref} in agentcli's copy is {arrived or 'missing'}, not {commit}")


def drop_aside(root: Path, prefix: str) -> None:
    """Forget the states set aside whose names start with `prefix`."""
    mirror = repository(root)
    if mirror is not None:
        for ref in (mirror.try_("for-each-ref", "--format=%(refname)", f"{ASIDE_REFS}/{prefix}*") or "").split():
            mirror.try_("update-ref", "-d", ref)


def forget(root: Path, name: str, ref: str) -> None:
    """Drop a checkpoint, and the refs kept with it, from the mirror (after its undo)."""
    mirror = repository(root)
    if mirror is None:
        return
    mirror.try_("update-ref", "-d", ref)
    for kept in (mirror.try_("for-each-ref", "--format=%(refname)", f"{STATE_REFS}/{name}/") or "").split():
        mirror.try_("update-ref", "-d", kept)


def recover(
    root: Path,
    name: str,
    commit: str,
    head_ref: str | None,
    since: float | None = None,
    store_folders: tuple[int, ...] | None = None,
) -> Git:
    """The repository at `root`, with what the sandbox destroyed brought back from the mirror: its
    `.git` folder (`rm -rf .git`), the refs it had at the checkpoint, and every object the checkpoint
    and those refs need (deleted refs and `gc`, an object file removed, one forged after `since`, the
    checkpoint's time, in a store whose folders were then `store_folders`: `objects.py`)."""
    dot = root / ".git"
    if not dot.exists():
        dot.mkdir()
    if dot.is_symlink() or not dot.is_dir():
        return Git(root)  # a linked work tree: its git folder is elsewhere, out of the sandbox's reach
    remove_special_files(dot)
    git = Git(root, git_dir=dot)
    damaged = not (dot / "HEAD").is_file()
    if damaged:
        git("init", "-q")
    if since is not None:
        objects.remove_forged(git, since, store_folders)
    mirror = repository(root)
    if mirror is None:
        return git
    checkpoint = mirror.try_("rev-parse", "-q", "--verify", f"{CHECKPOINT_REFS}/{name}") is not None
    if checkpoint and git.try_("cat-file", "-e", f"{commit}^{{commit}}") is None:
        # The checkpoint itself is gone (its refs deleted and collected, or all of .git): the refs
        # there were at the checkpoint come back with it (a state set aside has none).
        specs = [f"+{STATE_REFS}/{name}/{kind}/*:refs/{kind}/*" for kind in KEPT_REFS]
        git(*_fetch(mirror), *specs, f"+{CHECKPOINT_REFS}/{name}:{CHECKPOINT_REFS}/{name}")
    copy_missing(git, mirror, kept_tips(mirror, name, commit))
    if damaged and head_ref:
        git("symbolic-ref", "HEAD", head_ref)
    return git


def restore_refs(git: Git, name: str, symrefs: dict[str, str], saved_under: str) -> list[str] | None:
    """Make the repository's refs of the kept kinds, and its stash, what they were at checkpoint `name`,
    whose symbolic refs were `symrefs` ({ref: target}): refs made since go, refs deleted, moved or made
    symbolic since come back (their objects are there: `recover`), each symbolic one as symbolic. Each
    ref replaced or removed is kept first under `saved_under`, so its commits stay reachable and an undo
    can itself be taken back. The stash is moved back, not deleted: its reflog (the older entries) stays.
    Returns the refs changed (`heads/feature`); None where the mirror holds no such checkpoint."""
    mirror = repository(git.root)
    if mirror is None or mirror.try_("rev-parse", "-q", "--verify", f"{CHECKPOINT_REFS}/{name}") is None:
        return None
    prefix = f"{STATE_REFS}/{name}/"
    then = {ref.removeprefix(prefix): value for ref, value in _refs(mirror, prefix).items()}
    then |= {ref.removeprefix("refs/"): f"ref: {target}" for ref, target in symrefs.items()}
    patterns = [f"refs/{kind}/" for kind in KEPT_REFS] + ["refs/stash"]
    now = {ref.removeprefix("refs/"): value for ref, value in _refs(git, *patterns).items()}
    changed = sorted(ref for ref in then.keys() | now.keys() if then.get(ref) != now.get(ref))
    for ref in changed:  # removals first: a new `heads/fix/typo` would stop `heads/fix` coming back
        if ref in now and not now[ref].startswith("ref: "):
            git.try_("update-ref", f"{saved_under}/{ref}", now[ref])  # fails only for a missing object
        if ref not in then or (now.get(ref, "").startswith("ref: ") and ref != "stash"):
            git.try_("update-ref", "--no-deref", "-d", f"refs/{ref}")
    for ref in changed:
        if ref not in then:
            continue
        if then[ref].startswith("ref: "):
            git.try_("symbolic-ref", "-m", "agentcli undo", f"refs/{ref}", then[ref].removeprefix("ref: "))
        else:  # the stash's reflog message is what `git stash list` shows: its commit's subject, as stash wrote
            why = git.try_("log", "-1", "--format=%s", then[ref]) if ref == "stash" else None
            git.try_("update-ref", "--no-deref", "-m", why or "agentcli undo", f"refs/{ref}", then[ref])
    return changed


def symbolic_refs(git: Git) -> dict[str, str]:
    """{ref: target} of the symbolic refs of the kinds a checkpoint keeps (`refs/remotes/origin/HEAD`)."""
    listing = git("for-each-ref", "--format=%(refname) %(symref)", *(f"refs/{kind}/" for kind in KEPT_REFS))
    return {ref: target for ref, _, target in (line.partition(" ") for line in listing.splitlines()) if target}


def kept_tips(mirror: Git, name: str, commit: str) -> list[str]:
    """Checkpoint `commit` and the commits of the refs the mirror keeps with it: what undo needs whole."""
    return [commit, *(v for v in _refs(mirror, f"{STATE_REFS}/{name}/").values() if not v.startswith("ref: "))]


def _fetch(mirror: Git) -> list[str]:
    """A fetch from the mirror that touches only the refs it names (whatever the repository's settings say)."""
    flags = ["-q", "--no-tags", "--no-prune", "--no-recurse-submodules", "--no-write-fetch-head", "--update-head-ok"]
    return ["fetch", *flags, str(mirror.git_dir)]


def _refs(git: Git, *patterns: str) -> dict[str, str]:
    """{ref: the object it names, or `ref: TARGET` for a symbolic one} of the refs under `patterns`."""
    listing = git("for-each-ref", "--format=%(objectname) %(symref) %(refname)", *patterns)
    found = {}
    for line in listing.splitlines():
        oid, target, ref = line.split(" ", 2)
        found[ref] = f"ref: {target}" if target else oid
    return found


def copy_missing(git: Git, mirror: Git, tips: list[str]) -> None:
    """Copy from the mirror the objects `tips` reach that the repository lacks. The walk stops at the
    mirror's shallow boundary, not the repository's (which the sandbox can write). A missing commit or
    tree hides what it reaches from the walk: all of that is copied with it (git skips what the
    repository holds)."""
    shallow = mirror.git_dir / "shallow"
    boundary = str(shallow) if shallow.is_file() else os.devnull
    checked = git("cat-file", "--batch-check=%(objectname)", input="".join(f"{tip}\n" for tip in tips))
    absent = [line.split()[0] for line in checked.splitlines() if line.endswith(" missing")]
    present = [tip for tip in dict.fromkeys(tips) if tip not in absent]
    walk = ["--shallow-file", boundary, "rev-list", "--objects", "--missing=print", "--no-object-names"]
    listing = git(*walk, *present) if present else ""
    missing = absent + [line[1:] for line in listing.split() if line.startswith("?")]
    if not missing:
        return
    pack = mirror.raw("pack-objects", "--revs", "--stdout", "-q", input=("\n".join(missing) + "\n").encode())
    git.raw("unpack-objects", "-q", input=pack)


def remove_special_files(folder: Path) -> None:
    """FIFOs, sockets and devices the sandbox left in the git folder (git would block on a FIFO)."""
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(parent, name)
            mode = path.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                path.unlink()
