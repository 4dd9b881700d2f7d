"""`agentcli resume [SESSION]`: go on with a run that was killed or interrupted (see session/resume.py)."""

from __future__ import annotations

from pathlib import Path

import typer


def resume_command(
    session: str = typer.Argument(None, help="Session id or a unique prefix (default: the latest run)."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository the run was in."),
    model: str = typer.Option(None, "--model", "-m", help="Another model to go on with (default: the run's)."),
    sandbox: str = typer.Option(None, "--sandbox", help="Another sandbox (default: the run's)."),
    json_output: bool = typer.Option(False, "--json", help="JSON Lines events on stdout; logs on stderr."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Show only the result."),
    ci: bool = typer.Option(None, "--ci/--no-ci", help="Headless: no spinner or colour."),
) -> None:
    """Go on with a run killed or interrupted part-way, from the start of the step it was in: the work
    tree as that step began, the shell's directory and variables, the model's context as it was sent,
    the run's limits counted on. Other settings (sandbox options) come from your configuration."""
    from agentcli.cli.main import _headless, _renderers, print_config_warnings
    from agentcli.config import load_settings
    from agentcli.errors import UsageError
    from agentcli.repo.checkpoint import find_repo_root
    from agentcli.session.journal import read_events, sessions_dir
    from agentcli.session.resume import ResumeRequest, resume, resume_point
    from agentcli.session.solve import locate_repository
    from agentcli.ui.runs import find_session

    use_git = (repo.resolve() / ".git").exists() or find_repo_root(repo) is not None
    root = locate_repository(repo, use_git=use_git)
    journal = find_session(session, root)
    if journal.parent.parent != sessions_dir(root):
        raise UsageError(f"session {journal.parent.name} ran in another repository: resume it there (--repo)")
    point = resume_point(read_events(journal))
    # The run's model, sandbox and limits, unless the flags say otherwise.
    flags = {**point.limits, "model": model or point.model, "sandbox": sandbox or point.sandbox}
    settings = load_settings(root, flags)
    print_config_warnings(settings)
    listeners = _renderers(json_output, quiet, headless=_headless(ci))
    outcome = resume(ResumeRequest(point=point, repo=root, settings=settings, use_git=use_git, listeners=listeners))
    raise typer.Exit(outcome.exit_code)
