"""The `agentcli` command. Heavy modules are imported inside commands so `--help` stays instant."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from agentcli import __version__
from agentcli.errors import AgentcliError

app = typer.Typer(
    name="agentcli",
    help="A terminal coding agent: plans, runs commands in a sandbox, shows the diff.",
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """Run `agentcli solve "TASK"` in a git repository, or `agentcli` alone for an interactive session."""
    if ctx.invoked_subcommand is None:
        from agentcli.cli.repl_cmd import repl_command

        ctx.invoke(repl_command)


@app.command()
def solve(
    task: str = typer.Argument(None, help="What to do, in plain words.", show_default=False),
    task_file: Path = typer.Option(None, "--task-file", help="Read the task from a file."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository to work in."),
    no_git: bool = typer.Option(False, "--no-git", help="Work in a directory that is not a git repository."),
    model: str = typer.Option(None, "--model", "-m", help="provider/model, local/NAME, or scripted:FILE."),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    fallback: list[str] = typer.Option(
        None, "--fallback", help="A model to fall back on when the one before is down (repeatable, in order)."
    ),
    cache: bool = typer.Option(None, "--cache/--no-cache", help="Reuse replies to identical requests."),
    sandbox: str = typer.Option(None, "--sandbox", help="auto, docker, bwrap or host."),
    image: str = typer.Option(None, "--image", help="Docker image to run commands in."),
    network: bool = typer.Option(None, "--network/--no-network", help="Allow network access in the sandbox."),
    memory_mb: int = typer.Option(None, "--memory", help="Sandbox memory limit in MiB."),
    cpus: float = typer.Option(None, "--cpus", help="Sandbox CPU limit."),
    pids: int = typer.Option(None, "--pids", help="Sandbox process limit."),
    max_steps: int = typer.Option(None, "--max-steps", help="Stop after this many model calls."),
    timeout: float = typer.Option(None, "--timeout", help="Stop after this many seconds of wall time."),
    command_timeout: float = typer.Option(None, "--command-timeout", help="Seconds one command may run."),
    max_cost: float = typer.Option(None, "--max-cost", help="Stop once the run has cost this many dollars."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Stop once the run has used this many tokens."),
    context_budget: int = typer.Option(None, "--context-budget", help="Cap the model's context, in tokens."),
    json_output: bool = typer.Option(False, "--json", help="JSON Lines events on stdout; logs on stderr."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Show only the result."),
    ci: bool = typer.Option(
        None, "--ci/--no-ci", help="Headless: no spinner or colour. Default: on with CI=true or a non-terminal stdin."
    ),
    branch: str = typer.Option(None, "--branch", help="Commit the change to this branch ('auto': agentcli/<task>)."),
    commit_message: str = typer.Option(None, "--commit-message", help="Message for the --branch commit."),
    output_patch: Path = typer.Option(None, "--output-patch", help="Write the change as a patch to this file."),
    apply: bool = typer.Option(True, "--apply/--no-apply", help="Keep the change in the working tree."),
    profile: str = typer.Option(None, "--profile", help="The agent's policies to start from (`agentcli policies`)."),
    policy: list[str] = typer.Option(None, "--policy", help="Switch one policy: NAME=off or NAME=on (repeatable)."),
    candidates: int = typer.Option(
        None, "--candidates", help="Replies sampled at a step that changes code; the tests choose (1: off)."
    ),
) -> None:
    """Do TASK in the repository and show the diff; `agentcli undo` takes it back."""
    from agentcli.config import load_settings
    from agentcli.repo.publish import Delivery
    from agentcli.session.solve import SolveRequest, locate_repository, solve

    text = _task_text(task, task_file)
    root = locate_repository(repo, use_git=not no_git)
    flags = {
        "model": model,
        "api_base": api_base,
        "fallbacks": fallback or None,
        "cache": cache,
        "sandbox": sandbox,
        "image": image,
        "network": network,
        "memory_mb": memory_mb,
        "cpus": cpus,
        "pids": pids,
        "max_steps": max_steps,
        "timeout": timeout,
        "command_timeout": command_timeout,
        "max_cost": max_cost,
        "max_tokens": max_tokens,
        "context_budget": context_budget,
        "profile": profile,
        "policies": policy or None,
        "candidates": candidates,
    }
    settings = load_settings(root, flags)
    print_config_warnings(settings)
    headless = _headless(ci)
    if settings.sandbox == "host":
        _confirm_host(interactive=not headless and not json_output)
    listeners = _renderers(json_output, quiet, headless=headless)
    if commit_message and not branch:
        branch = "auto"
    delivery = Delivery(branch=branch, commit_message=commit_message, patch_path=output_patch, apply=apply)
    request = SolveRequest(task=text, repo=root, settings=settings, use_git=not no_git, listeners=listeners)
    request.delivery = delivery
    outcome = solve(request)
    raise typer.Exit(outcome.exit_code)


def print_config_warnings(settings) -> None:
    """What the configuration did not take (e.g. the repository's file choosing the sandbox), once, on stderr."""
    for line in settings.warnings:
        typer.echo(f"agentcli: {line}", err=True)


def _confirm_host(*, interactive: bool) -> None:
    """`--sandbox host` is said out loud, and in a terminal confirmed once before anything runs."""
    from agentcli.errors import UsageError

    typer.echo("agentcli: warning: --sandbox host runs the model's commands on this machine, unisolated", err=True)
    if interactive and not typer.confirm("Run them without a sandbox?", default=False, err=True):
        raise UsageError("not run: choose --sandbox docker or bwrap for isolation")


def _headless(flag: bool | None) -> bool:
    """CI mode: asked for, or implied by CI=true or a stdin that is not a terminal."""
    if flag is not None:
        return flag
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or not sys.stdin.isatty()


def _task_text(task: str | None, task_file: Path | None) -> str:
    from agentcli.errors import UsageError

    if task_file is not None:
        try:
            task = task_file.read_text()
        except OSError as e:
            raise UsageError(f"cannot read task file {task_file}: {e.strerror}") from None
    if not task or not task.strip():
        raise UsageError('no task given: agentcli solve "what to do" (or --task-file FILE)')
    return task.strip()


def _renderers(json_output: bool, quiet: bool, *, headless: bool):
    from rich.console import Console

    from agentcli.ui.console import ConsoleRenderer
    from agentcli.ui.jsonl import JsonLinesRenderer

    def console() -> Console:
        # Headless: plain text, no spinner, no colour, unless FORCE_COLOR asks for it.
        plain = headless and not os.environ.get("FORCE_COLOR")
        return Console(
            stderr=json_output, highlight=False, no_color=plain or None, force_terminal=False if plain else None
        )

    listeners = []
    if json_output:
        listeners.append(JsonLinesRenderer(sys.stdout))
    if not quiet:
        listeners.append(ConsoleRenderer(console()))
    elif not json_output:
        from agentcli.events import RunFinished

        renderer = ConsoleRenderer(console())
        listeners.append(lambda event: renderer(event) if isinstance(event, RunFinished) else None)
    return listeners


@app.command()
def undo(
    session: str = typer.Argument(None, help="Session id (default: the latest run)."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository."),
) -> None:
    """Put the repository back exactly as it was before an agentcli run."""
    from agentcli.repo.checkpoint import BEFORE_UNDO_REFS
    from agentcli.session.undo import undo as undo_session
    from agentcli.session.undo import undo_root

    report = undo_session(undo_root(repo), session)
    extra = f", removed {len(report.removed_ignored)} ignored paths it created" if report.removed_ignored else ""
    typer.echo(f"restored the state before session {report.session} ({len(report.restored)} paths{extra})")
    typer.echo(f"the replaced state is kept as {BEFORE_UNDO_REFS}/{report.session}")


config_app = typer.Typer(help="Show the configuration; trust a repository's own file.", no_args_is_help=True)
app.add_typer(config_app, name="config")


def _config_root(repo: Path) -> Path:
    """The repository `repo` is in (its work tree's top), or `repo` itself outside git."""
    from agentcli.errors import UsageError
    from agentcli.repo.checkpoint import find_repo_root

    if not repo.is_dir():
        raise UsageError(f"not a directory: {repo}")
    return (find_repo_root(repo) or repo).resolve()


@config_app.command("show")
def config_show(
    repo: Path = typer.Option(Path("."), "--repo", help="The repository whose config applies."),
) -> None:
    """Every setting, its value, and where the value came from."""
    from agentcli.config import REPO_CONFIG, load_settings, repo_trust_state, user_config_path

    root = _config_root(repo) if repo.exists() else None
    settings = load_settings(root)
    print_config_warnings(settings)
    rows = []
    for name, value, source in settings.describe():
        if name in settings.ignored:
            source += f" (ignored from {settings.ignored[name]}: not trusted)"
        rows.append((name, repr(value) if isinstance(value, str) else str(value), source))
    width = max(len(value) for _, value, _ in rows)
    typer.echo(f"{'setting':<20}{'value':<{width + 2}}from")
    for name, value, source in rows:
        typer.echo(f"{name:<20}{value:<{width + 2}}{source}")
    typer.echo(f"\nuser config: {user_config_path()}")
    if root is not None and (state := repo_trust_state(root)):
        typer.echo(f"repository config: {root / REPO_CONFIG} ({state})")


@config_app.command("trust")
def config_trust(
    path: Path = typer.Argument(Path("."), help="The repository [default: the one around the current directory]."),
    revoke: bool = typer.Option(False, "--revoke", help="Stop trusting it."),
) -> None:
    """Trust the repository's .agentcli.toml (or --revoke).

    From a repository's file the security settings (sandbox, network, api_base, image, model, summary_model,
    memory_mb, cpus, pids) are ignored unless the user trusted that file; the trust is for its content as it is
    now, and any change to the file withdraws it.
    """
    from agentcli.config import PROTECTED, REPO_CONFIG, revoke_repo_trust, trust_repo_config

    root = _config_root(path)
    if revoke:
        done = revoke_repo_trust(root)
        typer.echo(f"{'no longer trusted' if done else 'was not trusted'}: {root / REPO_CONFIG}")
        return
    digest, protected = trust_repo_config(root)
    sets = ", ".join(f"{name} = {protected[name]!r}" for name in PROTECTED if name in protected)
    typer.echo(
        f"trusted {root / REPO_CONFIG} (sha256 {digest[:12]}): "
        + (f"it sets {sets}" if sets else "it sets none of the security settings now")
    )
    typer.echo("any change to the file withdraws the trust; `agentcli config trust --revoke` withdraws it now")


def _register_commands() -> None:
    """The commands that live in modules of their own (each imports its heavy parts lazily)."""
    from agentcli.cli.eval_cmd import eval_command
    from agentcli.cli.export_cmd import export_command
    from agentcli.cli.map_cmd import map_command
    from agentcli.cli.models_cmd import models_app
    from agentcli.cli.policies_cmd import policies_command
    from agentcli.cli.repl_cmd import repl_command
    from agentcli.cli.resume_cmd import resume_command
    from agentcli.cli.sandbox_cmd import sandbox_app
    from agentcli.cli.sessions_cmd import sessions_app, show_command

    app.add_typer(sessions_app, name="sessions")
    app.command("show")(show_command)
    app.command("repl")(repl_command)
    app.command("map")(map_command)
    app.command("eval")(eval_command)
    app.command("export")(export_command)
    app.command("resume")(resume_command)
    app.command("policies")(policies_command)
    app.add_typer(models_app, name="models")
    app.add_typer(sandbox_app, name="sandbox")


_register_commands()


def run() -> None:
    """Console entry point: one-line errors with documented exit codes, never a traceback."""
    args = sys.argv[1:]
    # `agentcli --model X` means the interactive session with that option.
    if args and args[0].startswith("-") and args[0] not in ("--help", "--version"):
        args = ["repl", *args]
    try:
        app(args=args, prog_name="agentcli")
    except AgentcliError as error:
        typer.echo(f"agentcli: {error}", err=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        typer.echo("agentcli: interrupted", err=True)
        sys.exit(130)
