"""The AMX probe: a crash of the throwaway process is seen, remembered, and worked around."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from agentcli.models import cpu_kernels


def fake_llama_cpp(tmp_path: Path, system_info: str, body: str) -> types.SimpleNamespace:
    """A `llama_cpp` package on disk whose import runs `body`, for the probe's own process."""
    package = tmp_path / "fake" / "llama_cpp"
    (package / "lib").mkdir(parents=True)
    (package / "__init__.py").write_text(body)
    (package / "lib" / "libggml-cpu.so").write_bytes(b"build 1")
    return types.SimpleNamespace(
        __file__=str(package / "__init__.py"), llama_print_system_info=lambda: system_info.encode()
    )


@pytest.fixture
def probe_path(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    return tmp_path / "cache" / "kernels.json"


def test_a_probe_killed_by_a_signal_turns_extra_buffers_off_once(tmp_path, probe_path, caplog):
    crashing = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    llama_cpp = fake_llama_cpp(tmp_path, "CPU : AVX512 = 1 | AMX_INT8 = 1 |", crashing)
    assert cpu_kernels.extra_buffers_safe(llama_cpp, "model.gguf", probe_path) is False
    assert "AMX kernels crash on this CPU" in caplog.text and "-mno-amx-int8" in caplog.text
    (Path(llama_cpp.__file__).parent / "__init__.py").write_text("")  # would pass now, but the verdict is kept
    assert cpu_kernels.extra_buffers_safe(llama_cpp, "model.gguf", probe_path) is False
    (Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so").write_bytes(b"build 2, rebuilt")
    assert cpu_kernels.extra_buffers_safe(llama_cpp, "model.gguf", probe_path) is True  # a new build is probed


def test_no_amx_kernels_means_no_probe(tmp_path, probe_path):
    llama_cpp = fake_llama_cpp(tmp_path, "CPU : AVX2 = 1 | AMX_INT8 = 0 |", "raise SystemExit(3)")
    assert cpu_kernels.extra_buffers_safe(llama_cpp, "model.gguf", probe_path) is True
    assert not probe_path.exists()


def test_a_probe_that_fails_without_a_signal_gives_no_verdict_against(tmp_path, probe_path):
    llama_cpp = fake_llama_cpp(tmp_path, "AMX_INT8 = 1", "raise SystemExit(3)")
    assert cpu_kernels.extra_buffers_safe(llama_cpp, "model.gguf", probe_path) is True


@pytest.mark.llamacpp
def test_models_load_and_run_without_extra_buffers():
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from agentcli.errors import ComponentUnavailable, UsageError
    from agentcli.models import store

    try:
        path = store.pull("local/smollm2-135m", progress=False)
    except (ComponentUnavailable, UsageError) as exc:
        pytest.skip(f"SmolLM2-135M cannot be obtained: {exc}")
    defaults = llama_cpp.llama_cpp.llama_model_default_params
    with cpu_kernels.without_extra_buffers(llama_cpp):
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is False
        llama = llama_cpp.Llama(model_path=str(path), n_ctx=256, n_threads=1, verbose=False)
    assert llama_cpp.llama_cpp.llama_model_default_params is defaults
    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True
    text = llama.create_completion("1, 2, 3,", max_tokens=4, temperature=0)["choices"][0]["text"]
    llama.close()
    assert text.strip()
