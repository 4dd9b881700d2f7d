"""Outputs the model has just seen, not shown to it again in full.

A small model that does not know how to go on reads the same file again: `cat durations.py`, three
times, each time 30 lines more of context, until the stuck detector ends the attempt. The output of
a command run again within the last few, unchanged, is replaced by a line that says so, and where the
command read one file of the repository, by the way to change that file.
"""

from __future__ import annotations

import dataclasses

from agentcli.agent.begun import read_file
from agentcli.prompts import render
from agentcli.sandbox.base import Observation

# How many commands back an output counts as just seen: older ones may have been summarised away.
RECENT_COMMANDS = 3
# Shorter outputs cost little to show again, and a line in their place says no less.
MIN_CHARS = 200


def _key(command: str) -> str:
    return "\n".join(line for line in command.strip().splitlines() if not line.lstrip().startswith("#"))


@dataclasses.dataclass
class RecentOutputs:
    """The outputs of the last few commands that succeeded, with their steps."""

    _recent: list[tuple[int, str, str]] = dataclasses.field(default_factory=list)

    def seen(self, step: int, command: str, obs: Observation) -> tuple[Observation, str] | None:
        """Where `command` printed just what it printed a few commands ago: the observation to show
        in its place, and a note; None otherwise. Each command is recorded."""
        key = _key(command)
        if not obs.ok:
            return None
        earlier = next((s for s, k, out in self._recent if k == key and out == obs.output), None)
        self._recent = [*self._recent, (step, key, obs.output)][-RECENT_COMMANDS:]
        if earlier is None or len(obs.output) < MIN_CHARS:
            return None
        lines = obs.output.count("\n") + (not obs.output.endswith("\n"))
        # Step 0: agentcli's look before the first reply.
        shown = dataclasses.replace(obs, output=render("observation/same_output", lines=lines, step=earlier))
        read = read_file(key)
        return shown, render("notes/same_output", step=earlier, path=read[0] if read else None)
