"""How long `agentcli --help` takes, beside a bare `python -c pass` (target: under 0.25 s here).

Run: python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def timed(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    baseline = timed([sys.executable, "-c", "pass"], args.runs)
    help_times = timed([sys.executable, "-m", "agentcli", "--help"], args.runs)
    version_times = timed([sys.executable, "-m", "agentcli", "--version"], args.runs)
    base = statistics.median(baseline)
    print(f"{'command':<28}{'median s':>10}{'min s':>10}{'x python':>10}")
    for name, times in (
        ("python -c pass", baseline),
        ("agentcli --help", help_times),
        ("agentcli --version", version_times),
    ):
        median = statistics.median(times)
        print(f"{name:<28}{median:>10.3f}{min(times):>10.3f}{median / base:>10.1f}")
    verdict = "meets" if statistics.median(help_times) < 0.25 else "MISSES"
    print(f"agentcli --help median {statistics.median(help_times):.3f} s: {verdict} the 0.25 s target")


if __name__ == "__main__":
    main()
