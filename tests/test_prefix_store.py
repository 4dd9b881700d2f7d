"""The system message's KV state kept on disk: a later process starts from it and replies the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.models import prefix_store
from agentcli.models.base import Message
from agentcli.models.prefix_store import PrefixStore, opening_length

SMOL = "local/smollm2-135m"
SYSTEM = (
    "You are a careful assistant. You answer questions about shell commands in one sentence, and you never "
    "invent options a command does not have. When you are unsure, you say so and name the manual page."
)


def _chat(question: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def test_a_saved_state_comes_back_only_for_its_tokens_and_identity(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    store.save([1, 2, 3], b"state")
    assert store.load([1, 2, 3]) == b"state"
    assert store.load([1, 2, 4]) is None
    assert PrefixStore(tmp_path, "model-b").load([1, 2, 3]) is None


def test_a_file_that_does_not_check_out_is_removed(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    store.save([1, 2, 3], b"state of the opening")
    (saved,) = tmp_path.glob("*.kv")
    saved.write_bytes(saved.read_bytes()[:-1] + b"X")  # one byte of the state changed
    assert store.load([1, 2, 3]) is None
    assert not saved.exists()


def test_only_the_most_recent_openings_are_kept(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    for n in range(prefix_store.KEPT_FILES + 3):
        store.save([n], b"state")
    assert len(list(tmp_path.glob("*.kv"))) == prefix_store.KEPT_FILES
    assert store.load([prefix_store.KEPT_FILES + 2]) == b"state"


def test_the_opening_is_the_common_start_of_both_tokenisations() -> None:
    opening = [*range(40), 7, 8]  # the system message alone ends with a reply's start
    assert opening_length(list(range(50)), opening) == 40
    assert opening_length(list(range(50)), [*range(10), 99]) == 0  # too short to be worth a file


@pytest.mark.llamacpp
@pytest.mark.parametrize("speculative", [False, True])
def test_a_later_process_starts_from_the_saved_opening_and_replies_the_same(tmp_path: Path, speculative: bool) -> None:
    pytest.importorskip("llama_cpp")
    from agentcli.models import store
    from agentcli.models.llamacpp import load_local_model, unload

    store.pull(SMOL, progress=False)

    def fresh_process():
        unload()  # a new context, its KV cache empty, as in a new process
        return load_local_model(SMOL, n_ctx=2048, speculative=speculative, prefix_cache=tmp_path)

    question = _chat("What does `ls -a` show?")
    first = fresh_process().complete(question, max_tokens=24)
    assert first.usage.prompt_evaluated == first.usage.prompt_tokens
    assert len(list(tmp_path.glob("*.kv"))) == 1

    model = fresh_process()
    llama = model.load()
    opening = opening_length(model._tokens(llama, question), model._tokens(llama, question[:1]))
    assert opening > 40
    second = model.complete(question, max_tokens=24)
    assert second.usage.prompt_evaluated == second.usage.prompt_tokens - opening
    assert second.text == first.text
    assert second.raw["tokens"]["response_ids"] == first.raw["tokens"]["response_ids"]

    other = fresh_process().complete(_chat("What does `cd -` do?"), max_tokens=8)  # the same system message
    assert other.usage.prompt_evaluated == other.usage.prompt_tokens - opening
    unload()


@pytest.mark.llamacpp
def test_a_broken_saved_state_is_evaluated_again_with_the_same_reply(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from agentcli.models import store
    from agentcli.models.llamacpp import load_local_model, unload

    store.pull(SMOL, progress=False)
    question = _chat("What does `pwd` print?")
    unload()
    first = load_local_model(SMOL, n_ctx=2048, prefix_cache=tmp_path).complete(question, max_tokens=16)
    (saved,) = tmp_path.glob("*.kv")
    blob = bytearray(saved.read_bytes())
    blob[-100] ^= 0xFF
    saved.write_bytes(bytes(blob))

    unload()
    again = load_local_model(SMOL, n_ctx=2048, prefix_cache=tmp_path).complete(question, max_tokens=16)
    assert again.usage.prompt_evaluated == again.usage.prompt_tokens
    assert again.text == first.text
    assert len(list(tmp_path.glob("*.kv"))) == 1  # saved afresh
    unload()


@pytest.mark.llamacpp
def test_the_setting_reaches_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    from agentcli.config import load_settings
    from agentcli.models import store
    from agentcli.models.resolve import create_model

    store.pull(SMOL, progress=False)
    assert create_model(SMOL, load_settings(None)).prefix_cache is True  # on by default
    monkeypatch.setenv("AGENTCLI_PREFIX_CACHE", "false")
    settings = load_settings(None)
    assert settings.prefix_cache is False and settings.sources["prefix_cache"] == "env AGENTCLI_PREFIX_CACHE"
    assert create_model(SMOL, settings).prefix_cache is False
