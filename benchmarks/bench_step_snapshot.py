"""What journaling a step's start costs (`session/steps.py`: a work-tree snapshot and the shell's state),
beside `git status` on the same tree, in one run.

Run: python benchmarks/bench_step_snapshot.py [--steps 20] [--files 0]
The tree is a clone of this repository (plus `--files` extra small files), edited before every step as
an agent's commands would; prints the median and the worst of each over `--steps` steps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--files", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-steps-"))
    os.environ["AGENTCLI_STATE_DIR"] = str(work / "state")
    from agentcli.events import ModelStarted, StepStarted
    from agentcli.session.steps import StepMarker

    try:
        repo = work / "repo"
        subprocess.run(["git", "clone", "-q", str(HERE), str(repo)], check=True)
        for i in range(args.files):
            (repo / "extra" / f"{i // 1000}").mkdir(parents=True, exist_ok=True)
            (repo / "extra" / f"{i // 1000}" / f"f{i}.txt").write_text(f"{i}\n")
        channel = work / "channel"
        channel.mkdir()
        emitted: list[StepStarted] = []
        marker = StepMarker(repo, channel, emitted.append, use_git=True, exclude=lambda: ())
        snapshot, status = [], []
        for step in range(1, args.steps + 1):
            (repo / "README.md").write_text((repo / "README.md").read_text() + f"step {step}\n")
            (channel / "shell.state").write_text(f"declare -x STEP={step}\n")
            started = time.perf_counter()
            marker(ModelStarted(step=step))
            snapshot.append(time.perf_counter() - started)
            started = time.perf_counter()
            subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, check=True)
            status.append(time.perf_counter() - started)
        assert len({e.tree for e in emitted}) == args.steps  # every step its own snapshot
        files = len(subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.split())
        print(f"a clone of this repository, {files} tracked files + {args.files} untracked, {args.steps} steps")
        print(f"{'per step':<34}{'median ms':>10}{'worst ms':>10}")
        for label, times in (
            ("step start journaled (snapshot)", snapshot),
            ("git status --porcelain (baseline)", status),
        ):
            print(f"{label:<34}{statistics.median(times) * 1000:>10.1f}{max(times) * 1000:>10.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
