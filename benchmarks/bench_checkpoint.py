"""What a checkpoint (taken before every task) costs in this tree beside a baseline commit, in one run.

Run: python benchmarks/bench_checkpoint.py --baseline REV [--runs N] [--ignored-files N] [--run-objects N]
The repository checkpointed is a clone of this one (its whole history), with uncommitted edits and an
ignored folder of N small files. Each tree checkpoints a fresh clone: the first checkpoint (this
tree: the mirror outside the repository is made, the history copied) and the median of the next ones.
Then, as a run would, it writes `--run-objects` loose objects and times the checks the end of a run
makes on git's folder (planted files and links; in trees that have it, the objects written since).
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

WORKER = """
import json, os, sys, time
from pathlib import Path
os.environ["AGENTCLI_STATE_DIR"] = sys.argv[3]
from agentcli.repo.checkpoint import create_checkpoint
repo, runs = Path(sys.argv[1]), int(sys.argv[2])
times = []
for i in range(runs):
    (repo / "edited.txt").write_text(f"edit {i}\\n")
    started = time.perf_counter()
    checkpoint = create_checkpoint(repo, f"bench-{i}")
    times.append(time.perf_counter() - started)
import subprocess
from agentcli.repo import checkpoint as cp
for i in range(int(sys.argv[4])):
    blob = f"object {i} written by the run\\n"
    subprocess.run(["git", "hash-object", "-w", "--stdin"], input=blob, text=True, cwd=repo, capture_output=True)
started = time.perf_counter()
cp.remove_planted(repo, checkpoint)
if hasattr(cp, "remove_forged_objects"):
    cp.remove_forged_objects(repo, checkpoint)
times.append(time.perf_counter() - started)
print(json.dumps(times))
"""


def sample_repo(parent: Path, ignored_files: int) -> Path:
    repo = parent / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(HERE), str(repo)], check=True)
    (repo / ".git" / "info" / "exclude").write_text("ignored-data/\n")
    data = repo / "ignored-data"
    data.mkdir()
    for i in range(ignored_files):
        (data / f"row{i}.txt").write_text(f"{i}\n" * 20)
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nlocal edit\n")
    return repo


def measure(tree: Path, runs: int, ignored_files: int, run_objects: int) -> list[float]:
    """The checkpoints' seconds, then the end-of-run checks' seconds last."""
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-checkpoint-"))
    repo = sample_repo(work, ignored_files)
    code = f"import sys; sys.path.insert(0, {str(tree)!r})\n{WORKER}"
    done = subprocess.run(
        [sys.executable, "-c", code, str(repo), str(runs), str(work / "state"), str(run_objects)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip().splitlines()[-1])
    subprocess.run(["rm", "-rf", str(work)], check=False)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=8, help="checkpoints per clone")
    parser.add_argument("--ignored-files", type=int, default=500)
    parser.add_argument("--run-objects", type=int, default=200, help="loose objects the run writes")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="agentcli-baseline-")) / "tree"
    subprocess.run(["git", "-C", str(HERE), "worktree", "add", "-q", "--detach", str(base), args.baseline], check=True)
    try:
        size = subprocess.run(["git", "-C", str(HERE), "count-objects", "-vH"], capture_output=True, text=True)
        pack = next((line for line in size.stdout.splitlines() if line.startswith("size-pack")), "size-pack: ?")
        print(f"checkpoint of a clone of this repository ({pack}), {args.ignored_files} ignored files")
        print(f"{'tree':<26}{'first s':>10}{'next, median s':>16}{'end of run s':>14}")
        for label, tree in ((f"baseline ({args.baseline[:10]})", base), ("this tree", HERE)):
            *times, end = measure(tree, args.runs, args.ignored_files, args.run_objects)
            print(f"{label:<26}{times[0]:>10.3f}{statistics.median(times[1:]):>16.3f}{end:>14.3f}")
    finally:
        subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(base)], check=False)


if __name__ == "__main__":
    main()
