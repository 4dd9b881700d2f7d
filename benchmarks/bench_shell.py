"""Per-command round trip of the persistent shell beside spawning `bash -c` for each command.

Run: python benchmarks/bench_shell.py [--runs N] [--backends host,bwrap]
Prints medians and the ratio against a fresh `bash -c` per command (what exec-per-command agents pay).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agentcli.sandbox.local import BwrapSandbox, HostSandbox, bwrap_available


def round_trips(run, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--backends", default="host,bwrap")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    rows = []
    spawn = round_trips(lambda: subprocess.run(["bash", "-c", "true"], cwd=work, check=True), args.runs)
    rows.append(("bash -c per command (host)", spawn))
    if bwrap_available():
        argv = [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-all",
            "bash",
            "-c",
            "true",
        ]
        rows.append(
            ("bwrap bash -c per command", round_trips(lambda: subprocess.run(argv, check=True), args.runs // 4))
        )
    classes = {"host": HostSandbox, "bwrap": BwrapSandbox}
    for name in args.backends.split(","):
        if name == "bwrap" and not bwrap_available():
            continue
        with classes[name](work, work.parent / f"{work.name}-state" / name / "commands") as box:
            box.run("true")
            rows.append((f"persistent shell ({name})", round_trips(lambda b=box: b.run("true", timeout=30), args.runs)))
            rows.append(
                (
                    f"persistent shell ({name}), no timeout",
                    round_trips(lambda b=box: b.run("true", timeout=0), args.runs),
                )
            )
    base = statistics.median(spawn)
    print(f"trivial command round trip, {args.runs} runs")
    print(f"{'how':<42}{'median ms':>10}{'p90 ms':>10}{'vs bash -c':>12}")
    for name, times in rows:
        median = statistics.median(times)
        p90 = sorted(times)[int(len(times) * 0.9) - 1]
        print(f"{name:<42}{median * 1000:>10.2f}{p90 * 1000:>10.2f}{base / median:>11.2f}x")
    print("(the persistent shell also keeps cwd, variables and venvs between commands; bash -c keeps nothing)")


if __name__ == "__main__":
    main()
