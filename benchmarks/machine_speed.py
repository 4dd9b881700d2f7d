"""How fast this machine runs the local model: prompt and generation tokens per second, and a
pure-Python loop as a reference for the interpreter. Agent figures depend on it (a run has a wall
clock), so the protocol records it beside every result; figures of two machines compare only where
these agree.

  python3 benchmarks/machine_speed.py                       # the embedded default model
  python3 benchmarks/machine_speed.py --model local/qwen2.5-coder-0.5b
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.models.llamacpp import default_gpu_layers, physical_cores  # noqa: E402
from agentcli.models.store import resolve  # noqa: E402

PROMPT_TOKENS = 256
GENERATED_TOKENS = 32


def python_loop_seconds() -> float:
    """Seconds for ten million additions in a Python loop (about 0.5 s on a current desktop core)."""
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - started


def model_speed(model: str) -> dict[str, float]:
    """Prompt and generation tokens/s of `model` (a `local/` name) as agentcli loads it (its thread
    count, every layer on a GPU where there is one)."""
    import llama_cpp

    path = resolve(model).path
    if not path.is_file():
        sys.exit(f"machine_speed: {model} is not pulled: agentcli models pull {model}")
    threads = physical_cores()
    gpu_layers = default_gpu_layers()
    llm = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=1024,
        n_threads=threads,
        n_threads_batch=threads,
        n_gpu_layers=gpu_layers,
        verbose=False,
    )
    text = "def scale(values, factor):\n    return [v * factor for v in values]\n\n" * 40
    prompt = llm.tokenize(text.encode(), add_bos=False)[:PROMPT_TOKENS]
    llm.eval(prompt[:16])  # warm-up: the model's pages read, the compute graph built
    llm.reset()
    started = time.perf_counter()
    llm.eval(prompt)
    prompt_seconds = time.perf_counter() - started
    llm.reset()
    generated, first = 0, 0.0
    for _ in llm.generate(prompt[:32], temp=0.0):
        generated += 1
        if generated == 1:
            first = time.perf_counter()  # from the first token: the prompt's evaluation is timed above
        if generated > GENERATED_TOKENS:
            break
    generation_seconds = time.perf_counter() - first
    return {
        "threads": threads,
        "gpu_layers": gpu_layers,
        "prompt_tok_s": round(len(prompt) / prompt_seconds, 1),
        "generation_tok_s": round((generated - 1) / generation_seconds, 1),
    }


def measure(model: str) -> dict[str, float]:
    figures: dict[str, float] = {"python_loop_s": round(python_loop_seconds(), 2)}
    if model.startswith("local/"):
        figures |= model_speed(model)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    print(json.dumps(measure(parser.parse_args().model)))


if __name__ == "__main__":
    main()
