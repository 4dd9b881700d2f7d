#!/usr/bin/env bash
# GPU offload check for a device machine WITHOUT network (an H200 here), in one call. First, where PyPI is
# reachable: benchmarks/gpu_prepare.sh (fills .gpu, git-ignored). Then one device call from the repo root:
#   run(command="set -o pipefail; bash benchmarks/gpu_device.sh 2>&1 | tee $OUT/log", carry=[".gpu"],
#       timeout_s=590), then give_back.
# It builds llama-cpp-python 0.3.36 with CUDA (sm_90), writes a random-weight model with Qwen2.5-Coder-1.5B's
# shapes (benchmarks/gpu_random_model.py) and runs benchmarks/gpu_llamacpp.sh's measurement on GPU and CPU.
# Environment: GPU_DIR (default .gpu), BUILD_TIMEOUT (default 400 s); $OUT/build.log gets pip -v's output.
set -uo pipefail
cd "$(dirname "$0")/.."
G=${GPU_DIR:-.gpu}
SDIST=$G/llama_cpp_python-0.3.36.tar.gz
OUT=${OUT:-/tmp}
T0=$(date +%s)
el() { echo "[t+$(($(date +%s) - T0))s] $*"; }
export PYTHONUNBUFFERED=1
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nvcc --version | tail -1; cmake --version | head -1; python3 --version; nproc; ls /dev/nvidia0
grep -m1 "model name" /proc/cpuinfo; grep -o -m1 -w "amx_int8\|avx512f" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$G"/*.whl || exit 1
export PYTHONPATH=/tmp/site
python3 -c "import scikit_build_core, diskcache; print('scikit-build-core', scikit_build_core.__version__)"
tar xzf "$SDIST" -C /tmp llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py || exit 1
MODEL=/tmp/random-qwen2.5-1.5b-q8_0.gguf
(python3 benchmarks/gpu_random_model.py --vocab "$G/ggml-vocab-qwen2.gguf" --out $MODEL \
    --gguf-py /tmp/llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py; echo "generator rc=$?") >/tmp/gen.log 2>&1 &
GEN=$!
el "building llama-cpp-python (CUDA, sm_90)"
start=$(date +%s)
CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=16 \
    timeout "${BUILD_TIMEOUT:-400}" python3 -m pip install -v --no-index --no-deps --no-build-isolation \
    --no-cache-dir --target /tmp/site "$SDIST" >"$OUT/build.log" 2>&1
rc=$?
el "build rc=$rc, built in $(($(date +%s) - start)) s"
wait $GEN; cat /tmp/gen.log
if [ $rc -ne 0 ]; then grep -n "error\|Error" "$OUT/build.log" | head -20; tail -25 "$OUT/build.log"; exit 1; fi
ls -la /tmp/site/llama_cpp/lib
export PYTHONPATH=/tmp/site:.
python3 -c "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
NT=$(python3 -c "from agentcli.models.llamacpp import physical_cores; print(physical_cores())") || NT=$(nproc)
python3 -c "from agentcli.models.llamacpp import default_gpu_layers as g; print('agentcli default_gpu_layers() =', g())"
agent=$?
python3 benchmarks/gpu_variants.py /tmp/m "$NT"
el "GPU run (n_gpu_layers=-1)"
if [ $agent -eq 0 ]; then gpu=gpu; else gpu=gpu_noagent; fi
timeout 90 python3 /tmp/m/$gpu.py $MODEL
echo "gpu rc=$?"
el "CPU run (n_gpu_layers=0, $NT threads)"
timeout 120 python3 /tmp/m/cpu_noagent.py $MODEL
rc=$?
echo "cpu rc=$rc"
if [ $rc -gt 128 ] && [ $rc -ne 137 ] && [ $(($(date +%s) - T0)) -lt 420 ]; then
    el "CPU run again without extra buffer types"
    timeout 120 python3 /tmp/m/cpu_noextra.py $MODEL
    echo "cpu rc=$?"
fi
el done
