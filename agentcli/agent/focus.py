"""The repository code a failure points to, shown beside the failure (policy `failure-focus`).

A traceback's last frame in the repository is where to look; a failing assertion in a test points to
the test, and the function its failing line calls is the code to look at.
"""

from __future__ import annotations

from agentcli.agent.repo_view import RepoView
from agentcli.agent.run_context import RunContext
from agentcli.agent.tracebacks import called_names, excerpt, failure_location, is_test_file, numbered
from agentcli.prompts import render
from agentcli.sandbox.base import Observation


def failure_focus(repo: RepoView, output: str) -> tuple[str, int, str] | None:
    """The repository code a failure in `output` points to: (path, line, the lines shown to the model),
    or None."""
    location = failure_location(
        output, repo.sandbox.workdir, lambda path: repo.read(path) is not None, repo.shell_folder()
    )
    if location is None:
        return None
    path, line = location
    text = repo.read(path) or ""
    if is_test_file(path):
        lines = text.splitlines()
        for name in called_names(lines[line - 1] if 0 < line <= len(lines) else ""):
            found = repo.definition(name)
            if found is not None:
                where, source, (first, last) = found
                shown = numbered(source, first, last)
                note = render("notes/failing_test_calls", path=path, line=line, name=name, where=where, shown=shown)
                return where, first, note
    shown = excerpt(text, line)
    return (path, line, render("notes/error_source", path=path, line=line, shown=shown)) if shown else None


def run_focus(run: RunContext, obs: Observation) -> tuple[str, int, str] | None:
    """Where a failed command's failure points in the repository's code (policy `failure-focus`), or None."""
    if obs.ok or not run.policies.on("failure-focus"):
        return None
    return run.policies.fired_if("failure-focus", failure_focus(run.repo, obs.output))
