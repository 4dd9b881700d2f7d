"""Token ids for trainers: exact per call from llama.cpp, and a trajectory's sequences with their loss mask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.session.tokens import sequences
from tests.test_llamacpp import SMOL, _chat, smol_path  # noqa: F401 - a fixture
from tests.test_solve import agentcli


def test_one_sequence_while_each_prompt_goes_on_from_the_last_and_a_new_one_after_a_break():
    calls = [
        {"prompt_ids": [1, 2, 3], "response_ids": [7, 8], "logprobs": [-0.1, -0.2]},
        {"prompt_ids": [1, 2, 3, 7, 8, 4, 5], "response_ids": [9], "logprobs": [-0.3]},
        {"prompt_ids": [1, 6], "response_ids": [10, 11], "logprobs": None},  # compacted: a new sequence
    ]
    first, second = sequences(calls)
    assert first["ids"] == [1, 2, 3, 7, 8, 4, 5, 9]
    assert first["loss_mask"] == [0, 0, 0, 1, 1, 0, 0, 1]
    assert first["logprobs"] == [0.0, 0.0, 0.0, -0.1, -0.2, 0.0, 0.0, -0.3] and first["calls"] == [0, 1]
    assert second == {"ids": [1, 6, 10, 11], "loss_mask": [0, 0, 1, 1], "logprobs": [0.0] * 4, "calls": [2]}


@pytest.mark.llamacpp
def test_the_ids_are_what_the_model_evaluated_and_sampled(smol_path):  # noqa: F811
    from agentcli.models.llamacpp import load_local_model

    model = load_local_model(SMOL, n_ctx=2048)
    messages = _chat("Name a colour.")
    reply = model.complete(messages, max_tokens=12)
    ids = reply.raw["tokens"]
    llama = model.load()
    prompt = llama.detokenize(ids["prompt_ids"], special=True).decode()
    assert prompt == model._render(llama, messages)  # the ids reconstruct the prompt exactly
    assert len(ids["prompt_ids"]) == reply.usage.prompt_tokens
    sampled = llama.detokenize(ids["response_ids"], special=True).decode()
    assert sampled.startswith(reply.text) and len(ids["response_ids"]) >= reply.usage.completion_tokens
    assert len(ids["logprobs"]) == len(ids["response_ids"]) and all(lp <= 0 for lp in ids["logprobs"])


@pytest.mark.llamacpp
def test_a_run_exports_its_token_ids_and_they_go_into_atif(failing_repo: Path, smol_path):  # noqa: F811
    ran = agentcli("solve", "fix the test", "--model", SMOL, "--sandbox", "host", "--max-steps", "2", cwd=failing_repo)
    assert "Traceback" not in ran.stderr
    exported = agentcli("export", "--format", "tokens", cwd=failing_repo)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    calls = document["calls"]
    assert calls and document["model"] == SMOL
    sequence = document["sequences"][0]
    assert sequence["ids"][: len(calls[0]["prompt_ids"])] == calls[0]["prompt_ids"]
    assert len(sequence["ids"]) == len(sequence["loss_mask"]) == len(sequence["logprobs"])
    masked = sum(sum(s["loss_mask"]) for s in document["sequences"])
    assert masked == sum(len(c["response_ids"]) for c in calls)
    atif = json.loads(agentcli("export", cwd=failing_repo).stdout)
    first = next(s for s in atif["steps"] if s["source"] == "agent")
    assert first["metrics"]["completion_token_ids"] == calls[0]["response_ids"]
    assert first["metrics"]["prompt_token_ids"] == calls[0]["prompt_ids"]
