"""A reply's file block as the command that writes it, or why it is not written."""

from __future__ import annotations

from typing import NamedTuple

from agentcli.agent.edits import describe_change, new_content, replaces_with_fragment
from agentcli.agent.missing_imports import completed_imports
from agentcli.agent.parsing import ParsedReply
from agentcli.agent.repo_view import RepoView
from agentcli.prompts import render


class BlockWrite(NamedTuple):
    command: str  # writes the file
    notes: list[str]  # what the model is told of the write
    imported: bool  # standard-library imports the block lacked were added (policy `missing-import`)


def block_write(repo: RepoView, parsed: ParsedReply, begun_in: str | None, add_imports: bool) -> BlockWrite | str:
    """The command that writes `parsed`'s block to its file and the notes on it, or why it is not written
    (`begun_in`: the file whose one definition the reply was begun with; `add_imports`: complete the
    standard-library imports the change leaves missing)."""
    assert parsed.file_write is not None
    path, block = parsed.file_write
    before = repo.read(path)
    content, how = new_content(path, before, block, partial=path == begun_in)
    if before is not None and replaces_with_fragment(before, content):
        # "Look at line 15:" and a one-line block: a quote, not the file's new content.
        shown, lines = len(content.splitlines()), len(before.splitlines())
        return render("refusals/fragment", path=path, shown=shown, lines=lines)
    imported = completed_imports(path, content, before) if add_imports else None
    if imported is not None:
        content = imported.text
    # A block the same as its file rewrote nothing: only the change note speaks of it.
    notes = [f"{how}."] if content != before else []
    if imported is not None:
        notes.append(imported.note)
    notes.append(describe_change(path, before, content))
    if (folder := repo.shell_folder()) != ".":
        # A block's path is the repository's, wherever a `cd` left the shell: say so where they differ.
        notes.append(render("notes/block_from_root", path=path, folder=folder))
    return BlockWrite(repo.write_command(path, content, folder), notes, imported is not None)
