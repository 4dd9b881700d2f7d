#!/usr/bin/env bash
# Prepare the GPU offload check for a device machine WITHOUT network: run this where PyPI is reachable,
# then run benchmarks/gpu_device.sh there in one call, carrying the folder (64 MiB travel, this is ~11 MB):
#   benchmarks/gpu_prepare.sh [DIR]      # DIR (or $GPU_DIR) defaults to .gpu (in .gitignore)
#   run(command="set -o pipefail; bash benchmarks/gpu_device.sh 2>&1 | tee $OUT/log", carry=[".gpu"],
#       timeout_s=590), then give_back.
# DIR gets: llama-cpp-python 0.3.36's sdist stripped to what a CUDA build needs (no .git, docs, tests,
# examples, vocab models, other ggml backends, tools but mtmd), ggml-vocab-qwen2.gguf (the real Qwen2
# tokenizer, from that sdist), and the diskcache and scikit-build-core wheels (the rest is on the device).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-${GPU_DIR:-.gpu}}
NAME=llama_cpp_python-0.3.36
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The sdist only (--no-binary for it alone: ":all:" would also build cmake from source for its metadata).
python3 -m pip download -q --no-deps --no-binary llama-cpp-python -d "$WORK" "llama-cpp-python==0.3.36"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 -d "$DIR" "diskcache==5.6.3" "scikit-build-core==1.1.2"

tar xzf "$WORK/$NAME.tar.gz" -C "$WORK"
cd "$WORK/$NAME"
rm -rf .git .github docker docs examples tests
cd vendor/llama.cpp
cp models/ggml-vocab-qwen2.gguf "$DIR/"
rm -rf .devops .gemini .git .github app benches build-xcframework.sh ci conversion convert_*.py docs examples \
    flake.nix media models pocs requirements scripts skills tests
for d in ggml/src/ggml-*/; do
    case $(basename "$d") in
        ggml-blas | ggml-cpu | ggml-cuda | ggml-hip | ggml-musa | ggml-rpc) ;;
        *) rm -rf "$d" ;;
    esac
done
find tools -mindepth 1 -maxdepth 1 ! -name mtmd -exec rm -rf {} +
tar czf "$DIR/$NAME.tar.gz" -C "$WORK" "$NAME"
ls -la "$DIR"
du -sh "$DIR"
