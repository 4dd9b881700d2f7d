"""What the model is told of its edits: what an in-place `sed` did, and replacements its reply only
described (carried out where the text occurs in one file)."""

from __future__ import annotations

import shlex

from agentcli.agent.edits import describe_change, described_replacements, literal_substitution
from agentcli.agent.repo_view import RepoView
from agentcli.prompts import render


def sed_report(repo: RepoView, command: str, before: dict[str, str | None]) -> list[str]:
    """What an in-place `sed` did to each file: its diff; or, when its pattern matched nothing, the
    literal replacement it was meant as, or that it matched nothing."""
    notes = []
    literal = literal_substitution(command)
    for path, old in before.items():
        new = repo.read(path)
        if old is None or new is None:
            continue
        if new != old:
            notes.append(describe_change(path, old, new))
        elif literal is not None and literal[0] == literal[1]:
            # `sed -i 's/recieve/recieve/g'`: the misspelling the task names, written twice.
            notes.append(render("notes/sed_same_text", text=literal[0], path=path))
        elif literal is not None and literal[0] in old and repo.replace_literally(path, old, *literal):
            change = describe_change(path, old, repo.read(path) or "")
            notes.append(render("notes/sed_as_plain_text", path=path, change=change))
        else:
            notes.append(render("notes/sed_matched_nothing", path=path))
    return notes


def described_edits(repo: RepoView, reply: str) -> list[str]:
    """Carry out "Replace `OLD` with `NEW`" that the reply only describes (in prose or a comment) when
    OLD occurs in exactly one file of the repository; one note for each one done.

    A small model often knows the edit, says it, and then only runs the test.
    """
    notes = []
    for old, new in described_replacements(reply):
        grep = f"grep -rlF --exclude-dir=.git --exclude-dir=.agentcli -e {shlex.quote(old)} . 2>/dev/null"
        files = repo.listed_files(grep, hidden=True)
        if len(files) != 1:
            continue
        path = files[0]
        before = repo.read(path)
        if before is not None and repo.replace_literally(path, before, old, new, every=True):
            change = describe_change(path, before, repo.read(path) or "")
            notes.append(render("notes/described_replacement", old=old, new=new, change=change))
    return notes
