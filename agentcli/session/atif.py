"""A session's journal as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.4).

Steps: the task as the user's step; the commands agentcli ran before the first reply as a system
step with their observations; then one agent step per model reply, its commands as `bash` tool
calls, each command's output as the observation result linked to its call, and what agentcli told
the model instead of running a reply (an objection, a format error, a nudge) as a result of no call.
Token counts, cost and timing per step come from the journal, the exact token ids and logprobs
from the session's `tokens.jsonl` where the backend gave them; the run's result goes to
`final_metrics` and `extra`.
"""

from __future__ import annotations

import datetime
from typing import Any

import agentcli
from agentcli.session.replay import standing

SCHEMA_VERSION = "ATIF-v1.4"
# What agentcli says to the model in the place of an observation.
_FEEDBACK = {"format_error": "message", "nudge": "reason"}
# What the journal knows of a command besides its output, kept in the step's `extra`.
_COMMAND_FACTS = ("command", "exit_code", "duration", "timed_out", "truncated", "total_bytes", "killed_reason")


def _when(event: dict) -> str | None:
    seconds = event.get("time")
    if not isinstance(seconds, (int, float)):
        return None
    stamp = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _observe(step: dict[str, Any], event: dict, call_id: str | None) -> None:
    """Add a command's output to the step's observation, and what else the journal knows of it to `extra`."""
    result: dict[str, Any] = {"content": event.get("output", "")}
    if call_id is not None:
        result["source_call_id"] = call_id
    step.setdefault("observation", {"results": []})["results"].append(result)
    facts = {key: event[key] for key in _COMMAND_FACTS if event.get(key) is not None}
    step.setdefault("extra", {}).setdefault("commands", []).append({"tool_call_id": call_id, **facts})


def trajectory(events: list[dict], token_ids: list[dict] | None = None) -> dict[str, Any]:
    """The ATIF object of one session's events (as `journal.read_events` returns them); `token_ids`,
    those of each model call (`tokens.read_calls`), go to the agent steps' metrics. A resumed run is
    the trajectory that stands: what a killed go did in the step the run went on from is left out."""
    events = standing(events)
    started = next((e for e in events if e.get("type") == "run_started"), {})
    results = [e for e in events if e.get("type") == "result"]
    model = started.get("model")
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": str(started.get("task", ""))}]
    first_reply = next((i for i, e in enumerate(events) if e.get("type") == "model_replied"), len(events))
    looks = [e for e in events[:first_reply] if e.get("type") == "command_finished"]
    if looks:
        message = "agentcli ran these commands before the first reply; the model saw their output"
        steps.append({"step_id": 2, "source": "system", "message": message})
        for event in looks:
            _observe(steps[-1], event, None)
    agent: dict[str, Any] = {}
    for event in events[first_reply:]:
        kind = event.get("type")
        if kind == "model_replied":
            agent = {"step_id": len(steps) + 1, "source": "agent", "message": event.get("text", "")}
            agent |= {"model_name": model} if model else {}
            agent["metrics"] = {
                "prompt_tokens": int(event.get("prompt_tokens") or 0),
                "completion_tokens": int(event.get("completion_tokens") or 0),
                "cost_usd": float(event.get("cost") or 0.0),
                "extra": {"duration_s": event.get("duration"), "prompt_evaluated": event.get("prompt_evaluated")},
            }
            steps.append(agent)
        elif kind == "command_finished":
            calls = agent.setdefault("tool_calls", [])
            call_id = f"call_{agent['step_id']}_{len(calls) + 1}"
            calls.append({"tool_call_id": call_id, "function_name": "bash", "arguments": {"command": event["command"]}})
            _observe(agent, event, call_id)
        elif kind in _FEEDBACK:
            agent.setdefault("observation", {"results": []})["results"].append({"content": str(event[_FEEDBACK[kind]])})
            agent.setdefault("extra", {}).setdefault("feedback", []).append(kind)
    for step, call in zip([s for s in steps if s["source"] == "agent"], token_ids or [], strict=False):
        step["metrics"]["prompt_token_ids"] = call["prompt_ids"]
        step["metrics"]["completion_token_ids"] = call["response_ids"]
        if call.get("logprobs") is not None:
            step["metrics"]["logprobs"] = call["logprobs"]
    times = [e for e in events if e.get("type") in ("run_started", "model_replied")]
    for step, event in zip([s for s in steps if s["source"] != "system"], times, strict=False):
        if (stamp := _when(event)) is not None:
            step["timestamp"] = stamp
    result = results[-1] if results else {}
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": str(started.get("session_id") or result.get("session_id") or ""),
        "agent": {"name": "agentcli", "version": agentcli.__version__, "model_name": started.get("model")},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": sum(s["metrics"]["prompt_tokens"] for s in steps if "metrics" in s),
            "total_completion_tokens": sum(s["metrics"]["completion_tokens"] for s in steps if "metrics" in s),
            "total_cost_usd": round(sum(s["metrics"]["cost_usd"] for s in steps if "metrics" in s), 6),
            "total_steps": len(steps),
        },
        "extra": {
            "sandbox": started.get("sandbox"),
            "status": result.get("status", "unfinished"),
            "reason": result.get("reason", "the journal has no result: the run was killed or is still going"),
            "summary": result.get("summary", ""),
            "files_changed": result.get("files_changed", []),
            "diffstat": result.get("diffstat", ""),
            "wall_time_s": result.get("wall_time"),
        },
    }
    if document["agent"]["model_name"] is None:
        del document["agent"]["model_name"]
    return document
