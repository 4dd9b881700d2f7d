"""The persistent shell's round trip in this tree beside a baseline commit's, on each backend, in one run.

Run: python benchmarks/bench_channel.py --baseline REV [--runs N] [--rounds N] [--backends host,bwrap,docker]
The baseline is checked out in a temporary git worktree; rounds alternate between it and this tree
(each round a fresh sandbox in a child process, N trivial commands), so both see the same machine
load. Prints the median and p90 round trip of each, and what this tree adds per command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Runs in a child process with the tree to measure first on sys.path: N round trips of `true`.
WORKER = """
import json, sys, tempfile, time
from pathlib import Path
backend, runs, inside = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "inside"
work = Path(tempfile.mkdtemp(prefix="agentcli-bench-channel-"))
repo = work / "repo"
repo.mkdir()
control = (repo / ".agentcli" if inside else work / "state") / "sessions" / "bench-channel" / "commands"
if backend == "docker":
    from agentcli.sandbox.docker import DockerSandbox as Box
else:
    from agentcli.sandbox.local import BwrapSandbox, HostSandbox
    Box = {"host": HostSandbox, "bwrap": BwrapSandbox}[backend]
box = Box(repo, control)
box.start()
try:
    box.run("true", timeout=30)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        box.run("true", timeout=30)
        times.append(time.perf_counter() - started)
finally:
    box.close()
print(json.dumps(times))
"""


def measure(tree: Path, backend: str, runs: int, inside: bool) -> list[float]:
    code = f"import sys; sys.path.insert(0, {str(tree)!r})\n{WORKER}"
    done = subprocess.run(
        [sys.executable, "-c", code, backend, str(runs), "inside" if inside else "outside"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[max(0, int(len(ordered) * 0.9) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=200, help="round trips per round")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per tree, alternating")
    parser.add_argument("--backends", default="host,bwrap,docker")
    parser.add_argument(
        "--baseline-control-inside",
        action="store_true",
        help="the baseline keeps its control folder inside the repository (versions before the state folder)",
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="agentcli-baseline-")) / "tree"
    subprocess.run(["git", "-C", str(HERE), "worktree", "add", "-q", "--detach", str(base), args.baseline], check=True)
    try:
        print(f"trivial command round trip: {args.rounds} rounds x {args.runs} runs per tree, alternating")
        print(f"{'backend':<10}{'tree':<24}{'median ms':>10}{'p90 ms':>10}")
        for backend in args.backends.split(","):
            times: dict[str, list[float]] = {"baseline": [], "this tree": []}
            try:
                for _ in range(args.rounds):
                    times["baseline"] += measure(base, backend, args.runs, args.baseline_control_inside)
                    times["this tree"] += measure(HERE, backend, args.runs, False)
            except subprocess.CalledProcessError as e:
                print(f"{backend:<10}unavailable: {(e.stderr or '').strip().splitlines()[-1:]}")
                continue
            medians = {}
            for tree, measured in times.items():
                median, p90 = summary(measured)
                medians[tree] = median
                label = f"{tree} ({args.baseline[:10]})" if tree == "baseline" else tree
                print(f"{backend:<10}{label:<24}{median:>10.3f}{p90:>10.3f}")
            print(f"{backend:<10}{'added per command':<24}{medians['this tree'] - medians['baseline']:>10.3f}")
    finally:
        subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(base)], check=False)


if __name__ == "__main__":
    main()
