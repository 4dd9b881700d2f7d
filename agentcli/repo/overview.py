"""What the agent is told about the repository before its first command."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from agentcli.config import Settings

MAX_LISTED_FILES = 60
log = logging.getLogger(__name__)


def list_files(root: Path) -> list[str]:
    """Files git would track (ignored ones left out), or a plain walk outside git."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if listing.returncode == 0:
        return sorted({line for line in listing.stdout.splitlines() if line and not line.startswith(".agentcli/")})
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def repository_overview(root: Path, task: str, settings: Settings) -> str:
    """The file list, then a ranked map of the code's symbols within `repo_map_tokens`."""
    files = list_files(root)
    if not files:
        return "The repository is empty."
    shown = files[:MAX_LISTED_FILES]
    more = f"\n… and {len(files) - len(shown)} more files" if len(files) > len(shown) else ""
    parts = [f"Files in the repository ({len(files)}):\n" + "\n".join(shown) + more]
    if settings.repo_map_tokens > 0:
        try:
            from agentcli.repo.repomap import build_repo_map

            code_map = build_repo_map(root, token_budget=settings.repo_map_tokens, mentioned=task)
        except Exception as e:  # the map is a help, never a reason to fail a run
            log.debug("repository map unavailable: %s", e)
            code_map = ""
        if code_map.strip():
            parts.append("Map of the code (most relevant first):\n" + code_map.strip())
    return "\n\n".join(parts)
