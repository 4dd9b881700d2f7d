"""Self-check of the evaluation task suite in benchmarks/tasks/.

For every task (or those named with --tasks) it sets up the work dir the way the
harness does (copy repo/, git init, one initial commit) and checks that:

  (a) after solution.sh, the task's tests pass;
  (b) on an untouched copy (an agent that does nothing), the tests fail
      (pytest exit status 1: tests ran and failed, not a collection error).

It also checks that running the tests leaves the work dir unchanged and reports how
long each test run took. Prints a table; exits 1 if any task is not right.

Usage: python3 benchmarks/check_tasks.py [--tasks ID [ID ...]] [--verbose]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

# The work dir is prepared exactly as `agentcli eval` prepares it.
from agentcli.eval.workspace import harness_env, install_tests, prepare, snapshot

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
REQUIRED = ("instruction.md", "repo", "tests/test_task.py", "solution.sh")
TEST_TIMEOUT_S = 60
SOLUTION_TIMEOUT_S = 60
SLOW_TESTS_S = 5.0


@dataclass
class Result:
    """Outcome of checking one task."""

    task: str
    difficulty: str = "?"
    category: str = "?"
    oracle: str = "-"
    noop: str = "-"
    seconds: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def prepare_workdir(task_dir: Path, root: Path) -> tuple[Path, Path]:
    """Copy repo/ and tests/ under root and commit the repo as the harness does."""
    ws = prepare(task_dir / "repo", root)
    return ws.workdir, install_tests(task_dir / "tests", ws)


def run_tests(workdir: Path, tests: Path) -> tuple[int, float, str]:
    """Run the task's tests the way the harness does; return (exit status, seconds, output)."""
    env = harness_env(AGENTCLI_TASK_WORKDIR=str(workdir))
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
            cwd=tests.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=TEST_TIMEOUT_S,
        )
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = -1, f"timed out after {TEST_TIMEOUT_S} s\n{exc.stdout or ''}"
    return rc, time.monotonic() - start, out


def run_solution(task_dir: Path, workdir: Path) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            ["bash", str(task_dir / "solution.sh")],
            cwd=workdir,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=SOLUTION_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return -1, f"solution.sh timed out after {SOLUTION_TIMEOUT_S} s"
    return proc.returncode, proc.stdout + proc.stderr


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def check_task(task_dir: Path, verbose: bool) -> Result:
    result = Result(task_dir.name)
    missing = [name for name in REQUIRED if not (task_dir / name).exists()]
    if missing:
        result.problems.append("missing " + ", ".join(missing))
        return result
    toml_path = task_dir / "task.toml"
    if toml_path.exists():
        meta = tomllib.loads(toml_path.read_text())
        result.difficulty = str(meta.get("difficulty", "?"))
        result.category = str(meta.get("category", "?"))
        if result.difficulty not in {"easy", "medium", "hard"}:
            result.problems.append(f"bad difficulty {result.difficulty!r}")

    # (a) the oracle solves it.
    with tempfile.TemporaryDirectory(prefix=f"check-{task_dir.name}-") as tmp:
        workdir, tests = prepare_workdir(task_dir, Path(tmp))
        rc, out = run_solution(task_dir, workdir)
        if rc != 0:
            result.oracle = "sol-err"
            result.problems.append(f"solution.sh exited {rc}: {_last_line(out)}")
            if verbose:
                print(out)
        else:
            before = snapshot(workdir)
            rc, secs, out = run_tests(workdir, tests)
            result.seconds.append(secs)
            result.oracle = "pass" if rc == 0 else f"FAIL({rc})"
            if rc != 0:
                result.problems.append(f"oracle: tests failed: {_last_line(out)}")
                if verbose:
                    print(out)
            if snapshot(workdir) != before:
                result.problems.append("oracle: tests changed the work dir")

    # (b) doing nothing does not pass.
    with tempfile.TemporaryDirectory(prefix=f"check-{task_dir.name}-") as tmp:
        workdir, tests = prepare_workdir(task_dir, Path(tmp))
        before = snapshot(workdir)
        rc, secs, out = run_tests(workdir, tests)
        result.seconds.append(secs)
        result.noop = "fail" if rc == 1 else ("PASS" if rc == 0 else f"ERR({rc})")
        if rc != 1:
            what = "passed" if rc == 0 else f"exited {rc} (want 1: tests ran and failed)"
            result.problems.append(f"no-op: tests {what}: {_last_line(out)}")
            if verbose:
                print(out)
        if snapshot(workdir) != before:
            result.problems.append("no-op: tests changed the work dir")

    slow = [s for s in result.seconds if s > SLOW_TESTS_S]
    if slow:
        result.problems.append(f"tests took {max(slow):.1f} s (limit {SLOW_TESTS_S:.0f} s)")
    return result


def discover(names: list[str] | None) -> list[Path]:
    if names:
        dirs = [TASKS_DIR / name for name in names]
        unknown = [d.name for d in dirs if not d.is_dir()]
        if unknown:
            raise SystemExit(f"unknown task(s): {', '.join(unknown)}")
        return dirs
    return sorted(d for d in TASKS_DIR.iterdir() if d.is_dir() and not d.name.startswith((".", "_")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", metavar="ID", help="check only these tasks")
    parser.add_argument("--verbose", "-v", action="store_true", help="print test output on failure")
    args = parser.parse_args(argv)

    results = []
    header = f"{'task':<26} {'difficulty':<10} {'category':<14} {'oracle':<8} {'no-op':<8} {'tests s':>8}  problems"
    print(header)
    print("-" * len(header))
    for task_dir in discover(args.tasks):
        res = check_task(task_dir, args.verbose)
        results.append(res)
        secs = max(res.seconds) if res.seconds else 0.0
        print(
            f"{res.task:<26} {res.difficulty:<10} {res.category:<14} {res.oracle:<8} {res.noop:<8} "
            f"{secs:>8.2f}  {'; '.join(res.problems) or 'ok'}",
            flush=True,
        )

    bad = [r for r in results if not r.ok]
    counts: dict[str, int] = {}
    for r in results:
        counts[r.difficulty] = counts.get(r.difficulty, 0) + 1
    spread = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print("-" * len(header))
    print(f"{len(results)} tasks ({spread}); {len(results) - len(bad)} right, {len(bad)} not right")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
