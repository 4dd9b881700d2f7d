"""What the response cache saves an eval-style re-run, with and without it, in one run.

Run: python benchmarks/bench_cache.py [--calls 20] [--delay 0.2]
A loopback OpenAI-compatible server (tests/fault_server.py) answers every request after `--delay` seconds.
One "run" is `--calls` model calls through `create_model` (LiteLLM, real HTTP), each prompt one turn longer
than the last, as an agent's are. The run is made twice without the cache and twice with it (the first fills
it, the second is the re-run); prints each run's wall time and how many requests reached the server.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))


def one_run(model, calls: int) -> float:
    messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "fix the bug"}]
    started = time.monotonic()
    for step in range(calls):
        reply = model.complete(messages, max_tokens=256, on_token=lambda piece: None)
        messages += [
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": f"[exit 0 · 0.{step}s] output of step {step}"},
        ]
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    os.environ["AGENTCLI_CACHE_DIR"] = tempfile.mkdtemp(prefix="agentcli-bench-cache-")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    from agentcli.config import Settings
    from agentcli.models.resolve import create_model
    from tests.fault_server import Fault, FaultServer

    step = iter(range(10**6))
    with FaultServer(
        lambda body: Fault.delayed(f"step {next(step)}: ```bash\ntrue\n```", args.delay),
        max_requests=10 * args.calls,
        lifetime=600,
    ) as server:
        # LiteLLM's first call pays its import and set-up: not part of any figure.
        warm = create_model("openai/bench", Settings(model="openai/bench", api_base=server.url))
        warm.complete([{"role": "user", "content": "warm up"}])
        results = []
        for cache in (False, True):
            settings = Settings(model="openai/bench", api_base=server.url, cache=cache)
            for label in ("first run", "re-run"):
                before = len(server.requests)
                seconds = one_run(create_model("openai/bench", settings), args.calls)
                results.append((cache, label, seconds, len(server.requests) - before))
    print(f"{args.calls} calls, server delay {args.delay:g}s each")
    for cache, label, seconds, requests in results:
        state = "on " if cache else "off"
        print(f"  cache {state}  {label:<9}  {seconds:7.3f}s  {requests:3d} requests reached the server")
    off = results[1][2]
    on = results[3][2]
    print(f"re-run: {off:.2f}s without the cache, {on:.3f}s with it ({off / max(on, 1e-9):.0f}x faster)")


if __name__ == "__main__":
    main()
