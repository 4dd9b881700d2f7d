"""Benchmark the on-disk KV state of the system message (`prefix_cache`): a fresh process's first reply.

Each measurement is a new process that loads the model and answers the first step of a run: agentcli's
own system prompt and a task with a look at a small repository, greedy, 16 tokens. Four kinds,
alternating over `--rounds` so noise hits them alike:
  off     the cache off: the whole prompt evaluated (the baseline);
  first   the cache on, its folder empty: the system message evaluated on its own and marked seen;
  second  the same again: the system message evaluated and its state saved;
  warm    the state restored: only the rest evaluated.
Printed: median seconds from the call to the first token, prompt tokens evaluated, whole process time,
and whether the replies are token for token alike.

Usage: python benchmarks/bench_prefix_cache.py [--model local/qwen2.5-coder-1.5b] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.models.catalog import DEFAULT_LOCAL_MODEL

MODES = ("off", "first", "second", "warm")

TASK = (
    "The tests in tests/test_stats.py fail since the last change to stats.py: find out why and fix it.\n\n"
    "Files in the repository:\nREADME.md\nstats.py\ntests/test_stats.py\n\n"
    "stats.py:\n```python\n"
    + "".join(f"def mean_{i}(values):\n    return sum(values) / (len(values) - 1)\n\n" for i in range(12))
    + "```"
)


def one(model_name: str, mode: str, folder: str) -> None:
    """Child: load the model, answer the first step, print the figures as JSON."""
    started = time.perf_counter()
    from agentcli.models.llamacpp import load_local_model
    from agentcli.prompts import render

    cache: bool | Path = Path(folder) if mode != "off" else False
    model = load_local_model(model_name, prefix_cache=cache)
    model.load()
    messages = [
        {"role": "system", "content": render("system", workdir="/workspace")},
        {"role": "user", "content": render("task", task=TASK, context="")},
    ]
    reply = model.complete(messages, max_tokens=16)
    print(
        json.dumps(
            {
                "ttft": reply.usage.time_to_first_token,
                "evaluated": reply.usage.prompt_evaluated,
                "prompt": reply.usage.prompt_tokens,
                "process": time.perf_counter() - started,
                "ids": reply.raw["tokens"]["response_ids"],
            }
        )
    )


def measure(model_name: str, mode: str, folder: str) -> dict:
    argv = [sys.executable, __file__, "--model", model_name, "--one", mode, "--folder", folder]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_LOCAL_MODEL)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.model, args.one, args.folder)
        return
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as folder:
            for mode in MODES:
                runs[mode].append(measure(args.model, mode, folder))
    print(f"{args.model}, first step of a run in a new process, median of {args.rounds} rounds")
    print(f"{'':6} {'first token s':>14} {'evaluated':>10} {'of prompt':>10} {'process s':>10}")
    for mode, rows in runs.items():
        ttft = statistics.median(r["ttft"] for r in rows)
        evaluated = statistics.median(r["evaluated"] for r in rows)
        process = statistics.median(r["process"] for r in rows)
        print(f"{mode:6} {ttft:14.2f} {evaluated:10.0f} {rows[0]['prompt']:10d} {process:10.2f}")
    alike = all(len({str(runs[mode][i]["ids"]) for mode in MODES[1:]}) == 1 for i in range(args.rounds))
    print(f"replies with the cache on token for token alike: {alike}")
    off_alike = all(runs["off"][i]["ids"] == runs["warm"][i]["ids"] for i in range(args.rounds))
    print(f"and alike to the reply with it off: {off_alike}")


if __name__ == "__main__":
    main()
