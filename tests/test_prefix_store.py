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


def _fresh_process(folder: Path, **options):
    """The model with an empty KV cache, as a new process has it."""
    pytest.importorskip("llama_cpp")
    from agentcli.models import store
    from agentcli.models.llamacpp import load_local_model, unload

    store.pull(SMOL, progress=False)
    unload()
    return load_local_model(SMOL, n_ctx=2048, prefix_cache=folder, **options)


def _opening(model, messages: list[Message]) -> int:
    llama = model.load()
    return opening_length(model._tokens(llama, messages), model._tokens(llama, messages[:1]))


@pytest.mark.llamacpp
@pytest.mark.parametrize("speculative", [False, True])
def test_a_later_process_starts_from_the_saved_opening_and_replies_the_same(tmp_path: Path, speculative: bool) -> None:
    question = _chat("What does `ls -a` show?")
    first = _fresh_process(tmp_path, speculative=speculative).complete(question, max_tokens=24)
    assert first.usage.prompt_evaluated == first.usage.prompt_tokens
    assert not list(tmp_path.glob("*.kv")) and len(list(tmp_path.glob("*.seen"))) == 1  # seen once: not kept

    second = _fresh_process(tmp_path, speculative=speculative).complete(question, max_tokens=24)
    assert second.usage.prompt_evaluated == second.usage.prompt_tokens
    assert len(list(tmp_path.glob("*.kv"))) == 1  # seen again: kept

    model = _fresh_process(tmp_path, speculative=speculative)
    opening = _opening(model, question)
    assert opening > 40
    third = model.complete(question, max_tokens=24)
    assert third.usage.prompt_evaluated == third.usage.prompt_tokens - opening
    assert first.raw["tokens"]["response_ids"] == second.raw["tokens"]["response_ids"]
    assert third.raw["tokens"]["response_ids"] == first.raw["tokens"]["response_ids"]
    assert third.text == first.text

    other = _fresh_process(tmp_path, speculative=speculative).complete(_chat("What does `cd -` do?"), max_tokens=8)
    assert other.usage.prompt_evaluated == other.usage.prompt_tokens - opening  # the same system message


@pytest.mark.llamacpp
@pytest.mark.parametrize("damage", ["checksum", "state"])
def test_a_saved_state_that_does_not_take_is_evaluated_again_with_the_same_reply(tmp_path: Path, damage: str) -> None:
    question = _chat("What does `pwd` print?")
    for _ in range(2):
        first = _fresh_process(tmp_path).complete(question, max_tokens=16)
    model = _fresh_process(tmp_path)
    opening = model._tokens(model.load(), question)[: _opening(model, question)]
    if damage == "checksum":  # a byte of the file changed: the file is not read
        (saved,) = tmp_path.glob("*.kv")
        blob = bytearray(saved.read_bytes())
        blob[-100] ^= 0xFF
        saved.write_bytes(bytes(blob))
    else:  # a state that checks out but that llama.cpp does not take
        PrefixStore.for_model(*_identity(model), tmp_path).save(opening, b"\0" * 64)
    again = model.complete(question, max_tokens=16)
    assert again.usage.prompt_evaluated == again.usage.prompt_tokens
    assert again.text == first.text
    assert len(list(tmp_path.glob("*.kv"))) == 1  # the file that did not check out replaced, the other kept


def _identity(model) -> tuple:
    from agentcli.models.llamacpp import _llama_cpp

    return _llama_cpp(), model.path, model._key[1:]


def test_a_write_that_fails_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PrefixStore(tmp_path, "model-a")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(prefix_store.os, "replace", disk_full)
    store.save([1, 2, 3], b"state")  # a cache: no error reaches the caller
    assert list(tmp_path.iterdir()) == []


def test_a_file_another_process_removes_meanwhile_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PrefixStore(tmp_path, "model-a")
    for n in range(prefix_store.KEPT_FILES):
        store.save([n], b"state")
    real_stat = Path.stat

    def vanishing(path: Path, *args, **kwargs):
        if path.suffix == ".kv" and path.name.startswith(store._file([0]).name[:8]):
            raise FileNotFoundError(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", vanishing)
    store.save([99], b"state")
    assert store.load([99]) == b"state"


@pytest.mark.llamacpp
def test_the_setting_reaches_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    from agentcli.config import load_settings
    from agentcli.models import store
    from agentcli.models.resolve import create_model

    store.pull(SMOL, progress=False)
    monkeypatch.setenv("AGENTCLI_CONFIG_DIR", str(tmp_path))  # not the user's own settings
    assert create_model(SMOL, load_settings(None)).prefix_cache is True  # on by default
    monkeypatch.setenv("AGENTCLI_PREFIX_CACHE", "false")
    settings = load_settings(None)
    assert settings.prefix_cache is False and settings.sources["prefix_cache"] == "env AGENTCLI_PREFIX_CACHE"
    assert create_model(SMOL, settings).prefix_cache is False
