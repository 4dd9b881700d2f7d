"""The `shell-syntax` check on DONE: which files are shell scripts, and which of them the task left
unable to parse, read by the shell itself in a real host sandbox over a git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.repo import checkpoint as cp
from agentcli.repo.shebang import interpreter
from agentcli.repo.tags import language_from_shebang
from agentcli.sandbox.local import HostSandbox
from agentcli.session.checks import shell_of
from agentcli.session.done import TaskState, broken_shell_now
from tests.conftest import channel_for, committed_repo, git


@pytest.mark.parametrize(
    ("first_line", "program"),
    [
        ("#!/bin/sh", "sh"),
        ("#! /usr/bin/env bash", "bash"),
        ("#!/usr/bin/env -S bash -e", "bash"),
        ("#!/usr/bin/env -i PATH=/bin python3", "python3"),
        ("#!/bin/zsh", "zsh"),
        ("#!/bin/bash -eu", "bash"),
        ("#!/usr/bin/env -u DEBUG -C /tmp bash", "bash"),
        ("#!/bin/bash\r", "bash"),
        ("echo hi", None),
        ("#!", None),
    ],
)
def test_the_program_a_shebang_names(first_line: str, program: str | None) -> None:
    assert interpreter(f"{first_line}\necho\n".encode()) == program


@pytest.mark.parametrize(
    ("path", "first_line", "shell"),
    [
        ("tools/run.sh", "echo hi", "bash"),
        ("run", "#!/bin/sh", "sh"),
        ("run", "#!/usr/bin/env -S bash -e", "bash"),
        ("run.sh", "#!/usr/bin/env python3", None),
        ("run.sh", "#!/bin/zsh", None),
        ("notes.txt", "echo hi", None),
    ],
)
def test_which_files_are_shell_scripts(path: str, first_line: str, shell: str | None) -> None:
    assert shell_of(path, f"{first_line}\nexit 0\n".encode()) == shell


def test_the_repository_map_reads_zsh_as_no_language_it_knows() -> None:
    assert language_from_shebang(b"#!/bin/zsh\n") is None
    assert language_from_shebang(b"#!/usr/bin/env -S python3 -u\n") == "python"
    assert language_from_shebang(b"#!/bin/sh\n") == "bash"


def _objection(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> str | None:
    """The check's objection after the task turned the committed files `before` into `after`."""
    repo = committed_repo(tmp_path / "repo", before)
    checkpoint = cp.create_checkpoint(repo, "task")
    for name, text in after.items():
        (repo / name).write_text(text)
    with HostSandbox(repo, channel_for(repo)) as box:
        return broken_shell_now(TaskState(repo, checkpoint), box)


def test_a_script_the_task_broke_is_objected_to_with_the_shells_words(tmp_path: Path) -> None:
    objection = _objection(tmp_path, {"run.sh": "echo hi\n"}, {"run.sh": "if true; then\n  echo hi\n"})
    assert objection is not None
    assert "run.sh does not parse (`bash -O extglob -n run.sh`)" in objection
    assert "syntax error: unexpected end of file" in objection


def test_a_new_sh_script_is_read_by_sh(tmp_path: Path) -> None:
    objection = _objection(tmp_path, {"a.txt": "x\n"}, {"go": "#!/bin/sh\nif true; then\n"})
    assert objection is not None and "go does not parse (`sh -n go`)" in objection


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("echo hi\n", "shopt -s extglob\nrm -f !(keep).log\n"),  # extglob, switched on in the script
        ("if true; then\n", "if true; then\n  echo hi\n"),  # broken before the task, and still
        ("echo hi\n", "#!/bin/zsh\nfor f (*.txt) echo $f\n"),  # another shell's script
    ],
    ids=["extglob", "broken-before", "zsh"],
)
def test_no_objection_where_the_task_broke_nothing(tmp_path: Path, before: str, after: str) -> None:
    assert _objection(tmp_path, {"run.sh": before}, {"run.sh": after}) is None


BROKEN = "if true; then\n  echo one\n  echo two\n  echo three\n"


def _moved_and_changed(repo: Path) -> None:
    git(repo, "mv", "run.sh", "start.sh")
    (repo / "start.sh").write_text(BROKEN + "  echo four\n")


def _moved_and_replaced(repo: Path) -> None:
    git(repo, "mv", "run.sh", "start.sh")
    (repo / "run.sh").write_text('#!/bin/sh\nexec ./start.sh "$@"\n')  # a wrapper where it was


def _moved_and_copied(repo: Path) -> None:
    (repo / "backup.sh").write_text(BROKEN)
    git(repo, "mv", "run.sh", "start.sh")


def _copied(repo: Path) -> None:
    (repo / "backup.sh").write_text(BROKEN)


@pytest.mark.parametrize("change", [_moved_and_changed, _moved_and_replaced, _moved_and_copied, _copied])
def test_a_script_broken_before_the_task_is_not_held_against_it_once_moved_or_copied(tmp_path: Path, change):
    repo = committed_repo(tmp_path / "repo", {"run.sh": BROKEN})
    checkpoint = cp.create_checkpoint(repo, "task")
    change(repo)
    with HostSandbox(repo, channel_for(repo)) as box:
        assert broken_shell_now(TaskState(repo, checkpoint), box) is None
        (repo / "zzz.sh").write_text("if true; then\n")  # a script the task wrote broken
        objection = broken_shell_now(TaskState(repo, checkpoint), box)
    assert objection is not None and "zzz.sh does not parse" in objection


def test_a_text_file_turned_into_a_broken_script_is_the_tasks_doing(tmp_path: Path) -> None:
    lines = "ls -la\necho building\nmake all\nmake install\necho done\n"
    repo = committed_repo(tmp_path / "repo", {"commands.txt": "Run these:\n" + lines})
    checkpoint = cp.create_checkpoint(repo, "task")
    (repo / "commands.txt").unlink()
    (repo / "install.sh").write_text("#!/bin/bash\n" + lines + "if true; then\n")
    with HostSandbox(repo, channel_for(repo)) as box:
        objection = broken_shell_now(TaskState(repo, checkpoint), box)
    assert objection is not None and "install.sh does not parse" in objection
