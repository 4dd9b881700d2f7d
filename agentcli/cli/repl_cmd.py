"""`agentcli repl` (and `agentcli` alone): the interactive session."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agentcli.errors import UsageError

ModelOption = Annotated[str | None, typer.Option("--model", "-m", help="provider/model, local/NAME, or scripted:FILE.")]
SandboxOption = Annotated[str | None, typer.Option("--sandbox", help="auto, docker, bwrap or host.")]
RepoOption = Annotated[Path, typer.Option("--repo", help="The repository to work in.")]
NoGitOption = Annotated[bool, typer.Option("--no-git", help="Work in a directory that is not a git repository.")]
FallbackOption = Annotated[
    list[str] | None,
    typer.Option("--fallback", help="A model to fall back on when the one before is down (repeatable, in order)."),
]
CacheOption = Annotated[
    bool | None, typer.Option("--cache/--no-cache", help="Reuse replies to identical requests.", show_default=False)
]
ModeOption = Annotated[
    str | None,
    typer.Option("--mode", help="Approvals: suggest, auto-edit or full-auto.", show_default=False),
]


def repl_command(
    model: ModelOption = None,
    sandbox: SandboxOption = None,
    repo: RepoOption = Path("."),
    no_git: NoGitOption = False,
    mode: ModeOption = None,
    fallback: FallbackOption = None,
    cache: CacheOption = None,
) -> None:
    """An interactive session: type tasks, approve commands, /diff, /undo, /commit."""
    from agentcli.config import load_settings
    from agentcli.session.solve import locate_repository
    from agentcli.ui.approval import parse_mode

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError('the interactive session needs a terminal; in scripts and pipes use agentcli solve "TASK"')
    chosen_mode = parse_mode(mode) if mode else None
    root = locate_repository(repo, use_git=not no_git)
    settings = load_settings(root, {"model": model, "sandbox": sandbox, "fallbacks": fallback or None, "cache": cache})
    from agentcli.cli.main import print_config_warnings

    print_config_warnings(settings)

    from agentcli.ui.repl import Repl

    raise typer.Exit(Repl(root, settings, use_git=not no_git, mode=chosen_mode).run())
