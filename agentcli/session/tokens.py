"""Token ids for trainers: each model call's exact ids, and a trajectory's sequences with their loss mask.

The llama.cpp backend reports, per call, the prompt ids it evaluated, the ids it sampled and the
log-probability of each (`ModelTokens` events); a session keeps them in `tokens.jsonl` beside its
journal. A trajectory is then rebuilt from those ids alone, never re-tokenised from text: while each
prompt begins with the previous prompt and reply, one sequence grows, the reply ids masked 1 and the
rest (system prompt, observations, agentcli's notes) 0; where a prompt does not (the context was
compacted, or a reply was kept in another form), a new sequence starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.events import Event, ModelTokens

TOKENS_FILE = "tokens.jsonl"


class TokenLog:
    """Appends each `ModelTokens` event to `tokens.jsonl` in a session's folder (made on the first)."""

    def __init__(self, folder: Path):
        self.path = folder / TOKENS_FILE

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelTokens):
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(event.to_dict()) + "\n")


def read_calls(folder: Path) -> list[dict[str, Any]]:
    """The model calls of a session, in order; [] where the backend gave no ids."""
    path = folder / TOKENS_FILE
    if not path.is_file():
        return []
    calls = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            calls.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
    return calls


def sequences(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trajectory as token sequences: `ids`, `loss_mask` (1 on ids the model sampled) and
    `logprobs` (the sampled ids' log-probabilities, 0.0 elsewhere) of equal lengths, and the calls
    each covers."""
    found: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, call in enumerate(calls):
        prompt, response = call["prompt_ids"], call["response_ids"]
        logprobs = call.get("logprobs") or [0.0] * len(response)
        if current is None or prompt[: len(current["ids"])] != current["ids"]:
            current = {"ids": [], "loss_mask": [], "logprobs": [], "calls": []}
            found.append(current)
        added = prompt[len(current["ids"]) :]
        current["ids"] += added + response
        current["loss_mask"] += [0] * len(added) + [1] * len(response)
        current["logprobs"] += [0.0] * len(added) + list(logprobs)
        current["calls"].append(number)
    return found


def sidecar(session_id: str, model: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The document `agentcli export --format tokens` writes."""
    return {"session_id": session_id, "model": model, "calls": calls, "sequences": sequences(calls)}
