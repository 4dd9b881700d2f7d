"""What the model is told of its edits: what an in-place `sed` did."""

from __future__ import annotations

from agentcli.agent.edits import describe_change, literal_substitution
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
