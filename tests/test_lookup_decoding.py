"""Drafting from the conversation (prompt lookup): the drafter alone, then against a real model (SmolLM2-135M),
where drafting changes how a reply is computed, greedy or sampled, not what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.reply_grammar import reply_grammar
from agentcli.models.base import Message
from agentcli.models.lookup_decoding import FIRST_DRAFTED, MOST_DRAFTED, NGRAM, Drafter
from tests.test_llamacpp import SMOL, smol_path  # noqa: F401  # the fixture

CODE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def test_the_draft_is_what_followed_the_last_ngram_before():
    drafter = Drafter([1, 2, 3, 4, 5, 6, 7, 9, 1, 2])
    assert drafter.draft() == []  # (9, 1, 2) never occurred before
    drafter.add(3)
    assert drafter.draft() == [4, 5, 6, 7][:FIRST_DRAFTED]
    drafter = Drafter([1, 2, 3, 8, 1, 2, 3, 9, 1, 2, 3])
    assert drafter.draft() == [9, 1, 2, 3][:FIRST_DRAFTED]  # the latest occurrence
    assert Drafter([1, 2]).draft() == [] and Drafter([1, 2, 3]).draft() == []
    assert NGRAM == 3


def test_the_draft_grows_when_taken_whole_and_shrinks_when_refused_at_once():
    drafter = Drafter([])
    drafter.taken(FIRST_DRAFTED, FIRST_DRAFTED)
    assert drafter.length == FIRST_DRAFTED * 2
    for _ in range(10):
        drafter.taken(drafter.length, drafter.length)
    assert drafter.length == MOST_DRAFTED
    drafter.taken(MOST_DRAFTED, 3)  # taken in part: the length stands
    assert drafter.length == MOST_DRAFTED
    for _ in range(10):
        drafter.taken(drafter.length, 0)
    assert drafter.length == 1
    drafter.taken(0, 0)  # nothing drafted: nothing learned
    assert drafter.length == 1


# --- against a real model ----------------------------------------------------------------------


def _copy_chat() -> list[Message]:
    return [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Repeat this code exactly, in a ```python block:\n{CODE}"},
    ]


@pytest.fixture
def models(smol_path: Path):  # noqa: F811
    from agentcli.models.llamacpp import load_local_model, unload

    plain = load_local_model(SMOL, n_ctx=2048)
    drafted = load_local_model(SMOL, n_ctx=2048, speculative=True)
    yield plain, drafted
    unload()


def _fresh(*models) -> None:
    for model in models:
        model.load().reset()


@pytest.mark.llamacpp
def test_undrafted_the_decode_is_the_librarys_token_for_token(models, monkeypatch):
    """With no draft, each batch is the one token before it: the decode, its cache bookkeeping and the
    log-probabilities are the library's exactly."""
    plain, drafted = models
    monkeypatch.setattr(Drafter, "draft", lambda self: [])
    for grammar in (None, reply_grammar()):
        _fresh(plain)
        expected = plain.complete(_copy_chat(), max_tokens=60, grammar=grammar)
        _fresh(drafted)
        reply = drafted.complete(_copy_chat(), max_tokens=60, grammar=grammar)
        assert reply.raw["tokens"] == expected.raw["tokens"]
        assert reply.text == expected.text and reply.usage.prompt_evaluated == expected.usage.prompt_evaluated
        assert reply.raw["drafted_tokens"] == {"drafted": 0, "accepted": 0}


@pytest.mark.llamacpp
def test_a_copy_is_drafted_and_taken_and_reads_as_the_plain_reply(models):
    """A reply that copies the prompt is mostly checked in batches. A batch's logits may differ from one
    token's a little, so where two tokens nearly tie the pick may differ: the copy itself does not."""
    plain, drafted = models
    _fresh(plain)
    expected = plain.complete(_copy_chat(), max_tokens=80)
    _fresh(drafted)
    pieces: list[str] = []
    reply = drafted.complete(_copy_chat(), max_tokens=80, on_token=pieces.append)
    assert "".join(pieces) == reply.text
    drafts = reply.raw["drafted_tokens"]
    assert drafts["accepted"] > reply.usage.completion_tokens // 3, drafts
    assert expected.raw["drafted_tokens"] is None
    for line in ("def sub(a, b):", "    return a * b"):
        assert (line in reply.text) == (line in expected.text)
    # Each token's log-probability is known, drafted or not.
    logprobs = reply.raw["tokens"]["logprobs"]
    assert len(logprobs) == len(reply.raw["tokens"]["response_ids"]) and all(p <= 0 for p in logprobs)


@pytest.mark.llamacpp
def test_a_drafted_conversation_reuses_the_cache(models):
    """The second turn evaluates only the tokens the cache does not hold: the first reply stayed in it."""
    _plain, drafted = models
    _fresh(drafted)
    messages = _copy_chat()
    first = drafted.complete(messages, max_tokens=60)
    messages = [*messages, {"role": "assistant", "content": first.text}]
    messages.append({"role": "user", "content": "Now repeat only the function sub."})
    second = drafted.complete(messages, max_tokens=40)
    assert second.usage.completion_tokens > 0
    assert second.usage.prompt_evaluated < first.usage.prompt_evaluated / 2


@pytest.mark.llamacpp
def test_a_drafted_reply_keeps_to_the_reply_grammar(models):
    _plain, drafted = models
    messages = [
        {"role": "system", "content": "Reply with one sentence, then one ```bash block."},
        {"role": "user", "content": f"Show the file calc.py, which holds:\n{CODE}"},
    ]
    _fresh(drafted)
    reply = drafted.complete(messages, max_tokens=200, grammar=reply_grammar())
    assert reply.raw["drafted_tokens"]["drafted"] > 0
    assert reply.raw["finish_reason"] != "grammar"  # every token taken, drafted or not, was allowed
    if reply.raw["finish_reason"] != "length":
        assert reply.text.count("```") == 2, reply.text  # one closed block


@pytest.mark.llamacpp
def test_a_sampled_reply_is_drafted_repeatable_and_draws_as_an_undrafted_one(models, monkeypatch):
    """Each position takes one draw from the model's distribution, drafted or not: a drafted token
    stands where the draw picks it. A seeded reply is the same when asked again, and the same as an
    undrafted one until the first batch (whose logits differ a little from one token's)."""
    _plain, drafted = models
    _fresh(drafted)
    reply = drafted.complete(_copy_chat(), max_tokens=80, temperature=0.7)
    drafts = reply.raw["drafted_tokens"]
    assert drafts["accepted"] > reply.usage.completion_tokens // 3, drafts
    _fresh(drafted)
    assert drafted.complete(_copy_chat(), max_tokens=80, temperature=0.7).raw["tokens"] == reply.raw["tokens"]
    prompt, ids = reply.raw["tokens"]["prompt_ids"], reply.raw["tokens"]["response_ids"]
    first_batch = next(n for n in range(len(ids)) if Drafter(prompt + ids[:n]).draft())  # its logits differ
    monkeypatch.setattr(Drafter, "draft", lambda self: [])
    _fresh(drafted)
    undrafted = drafted.complete(_copy_chat(), max_tokens=80, temperature=0.7)
    assert undrafted.raw["drafted_tokens"] == {"drafted": 0, "accepted": 0}
    assert first_batch > 0 and undrafted.raw["tokens"]["response_ids"][:first_batch] == ids[:first_batch]
