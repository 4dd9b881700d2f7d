"""Commands run before the model's first reply, described for it: the code the task names. Where the
look shows a definition to change, the first reply begins its change.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

from agentcli.agent.observation import describe_result, finished_event
from agentcli.agent.recorded import journaled_as_command
from agentcli.agent.run_context import RunContext
from agentcli.events import CommandStarted
from agentcli.prompts import render

# Seconds a command run before the first reply may take (a server started by it is stopped).
FIRST_LOOK_TIMEOUT = 15.0
# A look at the lines of one file, numbered: the definition a task names, shown before the first reply.
_LINES_LOOK = re.compile(r"^cat -n (\S+) \| sed -n '(\d+),\d+p'$")


def first_look(run: RunContext, command: str) -> str:
    """Run `command` before the first reply and describe its result. It runs in a subshell (the model's
    shell keeps its state) and writes no bytecode into the repository."""
    run.events.emit(CommandStarted(step=0, command=command, notes=["run before the first reply"]))
    with run.tree_kept() as changed, journaled_as_command(run.sandbox):
        ran = run.repo.run_at_root(f"export PYTHONDONTWRITEBYTECODE=1 && {command}", FIRST_LOOK_TIMEOUT)
    obs = dataclasses.replace(ran, command=command)
    run.events.emit(finished_event(0, obs))
    run.recent_outputs.seen(0, command, obs)  # the same look sent as the first reply is no news
    fix = None
    if obs.ok and (lines := _LINES_LOOK.match(command)):
        # Shown the code to change and nothing more, a small model reads it again instead.
        fix = render("first_look/change_first", path=lines.group(1))
        run.state.shown_definition = (lines.group(1), int(lines.group(2)))
    kept = render("first_look/put_back", changed=changed[:5]) if changed else None
    notes = [note for note in (kept, fix) if note]
    return render("first_look/result", command=command, result=describe_result(obs, notes))


def lines_look(path: str, first: int, last: int) -> str:
    """The first look that shows lines `first` to `last` of `path`, numbered."""
    return f"cat -n {shlex.quote(path)} | sed -n '{first},{last}p'"
