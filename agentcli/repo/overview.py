"""What the agent is told about the repository before its first command."""

from __future__ import annotations

import logging
from pathlib import Path

from agentcli.config import Settings
from agentcli.prompts import render
from agentcli.repo.excerpts import is_code, select_excerpts

MAX_LISTED_FILES = 60
log = logging.getLogger(__name__)


def list_files(root: Path) -> list[str]:
    """The repository's files as git sees them (ignored ones left out), without agentcli's own."""
    from agentcli.repo.repomap import list_files as repository_files

    return [f for f in repository_files(root) if not f.startswith(".agentcli/")]


def repository_overview(root: Path, task: str, settings: Settings) -> str:
    """The file list, the contents of the files that matter most within `file_view_tokens`, then a
    ranked map of the code's symbols within `repo_map_tokens` (left out when every code file is shown)."""
    files = list_files(root)
    if not files:
        return render("first_look/overview", count=0)
    excerpts = select_excerpts(root, files, task, settings.file_view_tokens)
    whole = {e.path for e in excerpts if e.shown == e.lines}
    code_map = ""
    if settings.repo_map_tokens > 0 and any(is_code(f) and f not in whole for f in files):
        try:
            from agentcli.repo.repomap import build_repo_map

            code_map = build_repo_map(root, token_budget=settings.repo_map_tokens, mentioned=task)
        except Exception as e:  # the map is a help, never a reason to fail a run
            log.debug("repository map unavailable: %s", e)
            code_map = ""
    return render(
        "first_look/overview",
        count=len(files),
        shown=files[:MAX_LISTED_FILES],
        excerpts=[e.render() for e in excerpts],
        code_map=code_map.strip(),
    )
