"""How a command's result is shown to the model."""

from __future__ import annotations

import dataclasses

from agentcli.agent.tracebacks import without_library_frames
from agentcli.events import CommandFinished
from agentcli.prompts import render
from agentcli.sandbox.base import Observation


def format_observation(obs: Observation, notes: list[str] | None = None, next_step: str = "") -> str:
    """The result (see `describe_result`), then what to do next (`next_step`, or the reply format)."""
    # Small models follow the latest instruction best: restate the reply format after each result.
    return render("observation/next", result=describe_result(obs, notes), next_step=next_step)


def describe_result(obs: Observation, notes: list[str] | None = None) -> str:
    """A header line with the exit code and duration, then the output (head and tail when long), then notes."""
    output = obs.output.strip() if obs.syntax_error else without_library_frames(obs.output).rstrip("\n")
    return render(
        "observation/result",
        syntax_error=obs.syntax_error,
        timed_out=obs.timed_out,
        killed_reason=obs.killed_reason,
        exit_code=obs.exit_code,
        duration=obs.duration,
        output=output,
        truncated=obs.truncated and bool(obs.output_path),
        total_bytes=obs.total_bytes,
        output_path=obs.output_path,
        notes=notes or [],
    )


def finished_event(step: int, obs: Observation) -> CommandFinished:
    """The event of a command that ran: exactly the observation's fields (same names), and the step."""
    return CommandFinished(step=step, **dataclasses.asdict(obs))
