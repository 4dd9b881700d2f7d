"""How a command's result is shown to the model."""

from __future__ import annotations

from agentcli.agent.tracebacks import without_library_frames
from agentcli.sandbox.base import Observation


def format_observation(obs: Observation, notes: list[str] | None = None, next_step: str = "") -> str:
    """The result (see `describe_result`), then what to do next (`next_step`, or the reply format)."""
    # Small models follow the latest instruction best: restate the reply format after each result.
    return f"{describe_result(obs, notes)}\n[next: {next_step or NEXT_STEP}]"


def describe_result(obs: Observation, notes: list[str] | None = None) -> str:
    """A header line with the exit code and duration, then the output (head and tail when long), then notes."""
    lines: list[str] = []
    if obs.syntax_error:
        lines.append("[syntax error: bash could not parse the command, so it did not run]")
        lines.append(obs.output.strip())
    else:
        if obs.timed_out:
            head = (
                f"[timed out after {obs.duration:.0f}s: the command was stopped; shell state is as before it. "
                "Make it faster, limit it, or run it in the background]"
            )
        elif obs.killed_reason:
            head = f"[exit {obs.exit_code}: {obs.killed_reason}]"
        else:
            head = f"[exit {obs.exit_code} · {obs.duration:.1f}s]"
        lines.append(head)
        output = without_library_frames(obs.output).rstrip("\n")
        lines.append(output if output.strip() else "(no output)")
        if obs.truncated and obs.output_path:
            lines.append(
                f"[output was {obs.total_bytes:,} bytes; shown: head and tail. Full output: {obs.output_path} "
                f"(read a part with: sed -n '100,200p' {obs.output_path})]"
            )
    lines.extend(f"[note] {note}" for note in notes or [])
    return "\n".join(lines)


NEXT_STEP = "a sentence, then one command in a bash code block. DONE: only when the whole task is done and checked"
