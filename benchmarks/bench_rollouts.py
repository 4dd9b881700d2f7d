"""Rollout throughput of `agentcli eval`: rollouts per hour with 1 and 2 workers and through a local Ray
cluster, and the time the harness adds to each rollout beyond the agent's own.

Run: python benchmarks/bench_rollouts.py [--model scripted|local/qwen2.5-coder-1.5b] [--samples 3]
     [--tasks fix-off-by-one,json-to-csv] [--sandbox docker] [--timeout 300] [--no-ray]
Every configuration runs the same rollouts (tasks x samples) in one run of this script, so the plain
one-worker figure is the baseline of the others. `scripted` (the default) is a model that runs one
command and declares the task done, so the figures are the harness's own: preparing the work dir,
starting the sandbox, the agent process, the tests, the records. The overhead per rollout is its
wall time (preparation, tests and records included) minus the agent's own time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SUITE = HERE / "benchmarks" / "tasks"
SCRIPT = ["I look first.\n```bash\nls\n```", "DONE: looked at the files."]


def eval_run(out: Path, args, model: str, extra: list[str]) -> dict:
    argv = [sys.executable, "-m", "agentcli", "eval", str(SUITE), "--tasks", args.tasks, "--samples", str(args.samples)]
    argv += ["--model", model, "--sandbox", args.sandbox, "--timeout", str(args.timeout), "--out", str(out), *extra]
    env = {**os.environ, "AGENTCLI_CACHE": "0"}  # every rollout does its work: no replies replayed
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"eval failed ({proc.returncode}): {proc.stderr.strip()[-500:] or proc.stdout[-500:]}")
    tasks = json.loads(out.read_text())["tasks"]
    overheads = [t["wall_seconds"] - t["agent_seconds"] for t in tasks]
    return {
        "rollouts": len(tasks),
        "wall_s": wall,
        "per_hour": len(tasks) / wall * 3600,
        "agent_s": statistics.fmean(t["agent_seconds"] for t in tasks),
        "overhead_s": statistics.fmean(overheads),
        "errors": sum(1 for t in tasks if t["status"] == "error"),
        "solved": sum(1 for t in tasks if t["reward"] == 1),
    }


def start_ray(temp: str) -> tuple[str, dict]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    cpus = os.cpu_count() or 2
    subprocess.run(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--node-ip-address=127.0.0.1",
         f"--port={port}", f"--num-cpus={cpus}", f'--resources={{"docker": {cpus}}}', "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}"],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    return f"127.0.0.1:{port}", env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--tasks", default="fix-off-by-one,json-to-csv")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--sandbox", default="docker")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--no-ray", action="store_true", help="skip the run through a local Ray cluster")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-rollouts-"))
    model = args.model
    if model == "scripted":
        (work / "script.json").write_text(json.dumps(SCRIPT))
        model = f"scripted:{work / 'script.json'}"
    configs: list[tuple[str, list[str]]] = [("1 worker", ["-j", "1"]), ("2 workers", ["-j", "2"])]
    ray_temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    ray_env = None
    if not args.no_ray:
        address, ray_env = start_ray(ray_temp)
        configs.append((f"Ray, {os.cpu_count()} CPUs", ["--ray", address]))
    rows = []
    try:
        for name, extra in configs:
            figures = eval_run(work / f"{len(rows)}.json", args, model, extra)
            rows.append((name, figures))
            print(f"{name}: {figures}", file=sys.stderr, flush=True)
    finally:
        if ray_env is not None:
            subprocess.run(
                [sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"], capture_output=True, env=ray_env
            )
        shutil.rmtree(ray_temp, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    base = rows[0][1]["per_hour"]
    print(
        f"model {args.model}, sandbox {args.sandbox}, {rows[0][1]['rollouts']} rollouts ({args.tasks} x {args.samples})"
    )
    header = ("configuration", "rollouts/h", "vs 1 worker", "wall s", "agent s", "overhead s", "solved")
    print("{:<16} {:>10} {:>11} {:>7} {:>8} {:>10} {:>6}".format(*header))
    for name, f in rows:
        print(
            f"{name:<16} {f['per_hour']:>10.0f} {f['per_hour'] / base:>10.2f}x {f['wall_s']:>7.1f} "
            f"{f['agent_s']:>8.2f} {f['overhead_s']:>10.2f} {f['solved']:>6}"
        )


if __name__ == "__main__":
    main()
