"""The llama.cpp backend against a real model (SmolLM2-135M, pulled into the user cache once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.models import store
from agentcli.models.base import ContextLengthExceeded, Message

pytestmark = pytest.mark.llamacpp

SMOL = "local/smollm2-135m"


@pytest.fixture(scope="session")
def smol_path() -> Path:
    """SmolLM2 in the persistent cache (~/.cache/agentcli/models), assembled at most once."""
    try:
        import llama_cpp  # noqa: F401
    except Exception as exc:
        pytest.skip(f"llama_cpp cannot be imported: {exc}")
    try:
        return store.pull(SMOL, progress=False)
    except (ComponentUnavailable, UsageError) as exc:
        pytest.skip(f"SmolLM2-135M cannot be obtained: {exc}")


@pytest.fixture
def model(smol_path: Path):
    from agentcli.models.llamacpp import load_local_model

    return load_local_model(SMOL, n_ctx=2048)


def _chat(question: str) -> list[Message]:
    return [
        {"role": "system", "content": "You are a helpful assistant. Answer briefly."},
        {"role": "user", "content": question},
    ]


def _fresh(model) -> None:
    """Empty the KV cache so two greedy runs evaluate exactly the same way."""
    model.load().reset()


def test_chat_template_from_the_gguf_is_applied(model) -> None:
    llama = model.load()
    messages = _chat("What is 2 + 2?")
    prompt = model._render(llama, messages)
    assert prompt.startswith("<|im_start|>system\nYou are a helpful assistant.")
    assert prompt.endswith("<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n")
    tokens = model._tokens(llama, messages)
    (im_start,) = llama.tokenize(b"<|im_start|>", add_bos=False, special=True)
    assert tokens.count(im_start) == 3  # special tokens parsed, not spelled out
    assert model.count_tokens(messages) == len(tokens)
    assert model.context_window == 2048


def test_reply_streams_pieces_and_usage_adds_up(model) -> None:
    _fresh(model)
    messages = _chat("Name three colours.")
    pieces: list[str] = []
    reply = model.complete(messages, max_tokens=24, on_token=pieces.append)
    assert reply.text and "".join(pieces) == reply.text
    assert len(pieces) > 3
    usage = reply.usage
    assert usage.prompt_tokens == model.count_tokens(messages)
    assert usage.prompt_evaluated == usage.prompt_tokens  # nothing was cached
    assert 0 < usage.completion_tokens <= 24
    assert reply.raw["finish_reason"] in ("stop", "length")
    assert usage.time_to_first_token is not None and usage.time_to_first_token > 0
    assert usage.tokens_per_second is not None and usage.tokens_per_second > 0


def test_callback_can_stop_generation(model) -> None:
    _fresh(model)
    seen: list[str] = []

    def stop_after_three(piece: str) -> bool:
        seen.append(piece)
        return len(seen) == 3

    reply = model.complete(_chat("Tell me a long story about a dragon."), max_tokens=64, on_token=stop_after_three)
    assert len(seen) == 3
    assert reply.text == "".join(seen)
    assert reply.raw["finish_reason"] == "callback"
    assert reply.usage.completion_tokens < 10


def test_stop_sequences_cut_the_reply(model) -> None:
    messages = _chat("Count from one to twenty in words, separated by commas.")
    _fresh(model)
    full = model.complete(messages, max_tokens=40).text
    assert len(full) > 20, full
    marker = full[len(full) // 2 : len(full) // 2 + 3]
    expected = full[: full.find(marker)]
    _fresh(model)
    pieces: list[str] = []
    cut = model.complete(messages, max_tokens=40, stop=["@@never@@", marker], on_token=pieces.append)
    assert cut.text == expected
    assert "".join(pieces) == expected  # held-back text that became a stop sequence is never streamed
    assert cut.raw["finish_reason"] == "stop"
    # Stop sequences given at construction apply to every call.
    from agentcli.models.llamacpp import LlamaCppModel

    _fresh(model)
    fixed = LlamaCppModel(model.path, n_ctx=2048, stop=[marker]).complete(messages, max_tokens=40)
    assert fixed.text == expected


def test_extended_conversation_reuses_the_kv_cache(model) -> None:
    _fresh(model)
    messages = _chat("Which command lists files in a directory?")
    first = model.complete(messages, max_tokens=32)
    assert first.usage.prompt_evaluated == first.usage.prompt_tokens
    messages += [
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": "Output:\nREADME.md\nsetup.py\nsrc\ntests\n\nWhat next?"},
    ]
    second = model.complete(messages, max_tokens=16)
    sent, evaluated = second.usage.prompt_tokens, second.usage.prompt_evaluated
    assert sent > first.usage.prompt_tokens + first.usage.completion_tokens
    assert evaluated is not None and 0 < evaluated < sent / 2
    # Exactly the new turn (plus at most a token or two re-tokenised at the reply boundary).
    new_turn = sent - first.usage.prompt_tokens - first.usage.completion_tokens
    assert new_turn <= evaluated <= new_turn + 3


def test_roles_share_one_loaded_model_without_losing_their_caches(smol_path: Path) -> None:
    from agentcli.models.llamacpp import load_local_model

    main = load_local_model(SMOL, n_ctx=2048)
    summary = load_local_model(SMOL, n_ctx=2048)
    assert main.load() is summary.load()
    _fresh(main)
    messages = _chat("Describe the ls command.")
    first = main.complete(messages, max_tokens=24)
    other = summary.complete(_chat("Summarise: the user ran ls and saw four files."), max_tokens=16)
    # A different conversation: at most the shared system prompt is reused.
    assert other.usage.prompt_evaluated is not None and other.usage.prompt_evaluated > 10
    messages += [{"role": "assistant", "content": first.text}, {"role": "user", "content": "And ls -l?"}]
    second = main.complete(messages, max_tokens=8)
    assert second.usage.prompt_evaluated is not None
    assert second.usage.prompt_evaluated < second.usage.prompt_tokens / 2  # main's cache came back


def test_prompt_longer_than_the_context_is_refused(smol_path: Path) -> None:
    from agentcli.models.llamacpp import load_local_model

    small = load_local_model(SMOL, n_ctx=128)
    assert small.context_window == 128
    with pytest.raises(ContextLengthExceeded, match="128-token context"):
        small.complete(_chat("word " * 400), max_tokens=8)


def test_context_is_capped_by_the_model(smol_path: Path) -> None:
    from agentcli.models.llamacpp import LlamaCppModel

    assert LlamaCppModel(smol_path, n_ctx=100_000).context_window == 8192  # SmolLM2's own length
    assert LlamaCppModel(smol_path).context_window == 8192


def test_broken_files_fail_before_loading(tmp_path: Path) -> None:
    from agentcli.models.llamacpp import LlamaCppModel, load_local_model

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + b"\0" * 64)
    with pytest.raises(UsageError, match="not a usable GGUF model"):
        load_local_model(f"local/{bad}")
    with pytest.raises(UsageError, match="not a usable GGUF model"):
        LlamaCppModel(bad)
    with pytest.raises(UsageError, match=r"known: local/qwen2\.5-coder-1\.5b"):
        load_local_model("local/no-such-model")


def test_a_sampled_reply_is_the_same_for_the_same_prompt(model) -> None:
    """The seed comes from the prompt: two runs of one version can be compared reply by reply."""
    messages = _chat("Write one sentence about the sea.")
    replies = []
    for _ in range(2):
        _fresh(model)
        replies.append(model.complete(messages, max_tokens=24, temperature=1.5).text)
    assert replies[0] == replies[1]
    others = set()
    for question in ("Write one sentence about a forest.", "Write one sentence about a city.", "Say hi."):
        _fresh(model)
        others.add(model.complete(_chat(question), max_tokens=24, temperature=1.5).text)
    assert replies[0] not in others and len(others) == 3  # another prompt samples afresh


def test_a_reply_goes_on_from_the_prefix_it_is_given(model) -> None:
    messages = _chat("Write a Python function that adds two numbers.")
    prefix = "```python\ndef add_numbers(first, second):\n"
    _fresh(model)
    pieces: list[str] = []
    reply = model.complete(messages, max_tokens=24, prefix=prefix, on_token=pieces.append)
    assert model.continues_replies
    assert reply.text.startswith(prefix) and len(reply.text) > len(prefix)
    assert "".join(pieces) == reply.text  # the listener reads the reply from its start
    assert reply.usage.prompt_tokens > model.count_tokens(messages)  # the prefix was part of the prompt
    assert not reply.text[len(prefix) :].lstrip().startswith("def add_numbers")  # went on, not over


def test_the_empty_block_rule_reads_the_real_vocabulary(model) -> None:
    from agentcli.models.nonempty_blocks import BlockState

    llama = model.load()
    rule = model._engine().nonempty_blocks
    fence = llama.tokenize(b"```", add_bos=False, special=False)
    newline = llama.tokenize(b"\n", add_bos=False, special=False)
    command = llama.tokenize(b"ls", add_bos=False, special=False)
    body, on_fence = set(rule.forbidden[BlockState.BODY]), set(rule.forbidden[BlockState.FENCE])
    assert fence[0] in body and fence[0] in on_fence
    assert newline[0] in body and newline[0] not in on_fence  # a newline is how the block opens
    assert llama.token_eos() in body
    assert command[0] not in body


def test_run_seeds_sample_different_replies(smol_path):
    """At a temperature, two seeds give two replies to one prompt, and one seed gives the same twice."""
    from agentcli.models.llamacpp import LlamaCppModel, unload

    messages = [{"role": "user", "content": "Write one short sentence about the sea."}]

    def reply(seed: int) -> str:
        unload()  # each reply from a fresh evaluation: a KV cache reused changes the logits in the last bits
        model = LlamaCppModel(smol_path, temperature=1.0, seed=seed, max_tokens=24)
        return model.complete(messages).text

    first = reply(1)
    assert reply(1) == first
    assert any(reply(seed) != first for seed in (2, 3, 4))
