"""The measurement protocol: agentcli on the dev split, the test split and the rewordings, each apart.

Tasks in benchmarks/tasks/ carry `split = "dev"` or `split = "test"` in task.toml; each has two
rewordings of its instruction (`rewordings/1.md`, `rewordings/2.md`: other words and order, the same
requirements, judged by the same tests). Wording 0 is instruction.md itself. The test split and the
rewordings are only scored, never read for ideas (docs/eval.md).

  python3 benchmarks/protocol.py                                 # dev and test, every wording, 1.5B, Docker
  python3 benchmarks/protocol.py --splits test --wordings 0      # the test split as written
  python3 benchmarks/protocol.py --label general --profile general
  python3 benchmarks/protocol.py --report                        # the table of what has run

Each (split, wording) is one `agentcli eval` over a suite folder built for it, with the response
cache off (a cached reply would repeat the last run) and `--resume`, so an interrupted run goes on.
Results go to benchmarks/results/<label>/<split>-w<N>.json (ignored by git), and the machine's speed
with the model (benchmarks/machine_speed.py), measured once a machine, to <label>/machine.json,
printed under the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.eval.procs import with_lifeline  # noqa: E402
from agentcli.policies import DEFAULT_PROFILE  # noqa: E402
from benchmarks.machine_speed import measure  # noqa: E402

TASKS = ROOT / "benchmarks" / "tasks"
RESULTS = ROOT / "benchmarks" / "results"
SPLITS = ("dev", "test")
WORDINGS = (0, 1, 2)


def split_of(task: Path) -> str:
    return str(tomllib.loads((task / "task.toml").read_text()).get("split", ""))


def tasks_of(split: str, only: list[str] | None = None) -> list[Path]:
    found = [p for p in sorted(TASKS.iterdir()) if (p / "task.toml").is_file() and split_of(p) == split]
    return [p for p in found if not only or p.name in only]


def build_suite(split: str, wording: int, where: Path, only: list[str] | None = None) -> Path:
    """A suite folder holding the split's tasks with instruction N (0: the original)."""
    suite = where / f"{split}-w{wording}"
    shutil.rmtree(suite, ignore_errors=True)
    for task in tasks_of(split, only):
        instruction = task / "instruction.md" if wording == 0 else task / "rewordings" / f"{wording}.md"
        if not instruction.is_file():
            sys.exit(f"protocol: {task.name} has no {instruction.relative_to(task)}")
        copy = suite / task.name
        shutil.copytree(task, copy, ignore=shutil.ignore_patterns("rewordings", "__pycache__"))
        shutil.copyfile(instruction, copy / "instruction.md")
    return suite


def run(label: str, split: str, wording: int, args: argparse.Namespace) -> Path:
    out = RESULTS / label / f"{split}-w{wording}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    suite = build_suite(split, wording, RESULTS / label / "suites", args.tasks)
    command = [sys.executable, "-m", "agentcli", "eval", str(suite), "--out", str(out), "--resume"]
    command += ["--model", args.model, "--sandbox", args.sandbox, "--timeout", str(args.timeout)]
    command += ["--profile", args.profile, *(f"--policy={p}" for p in args.policy)]
    command += ["--candidates", str(args.candidates)] if args.candidates > 1 else []
    env = {**os.environ, "AGENTCLI_CACHE": "0"}
    print(f"== {label}: {split}, wording {wording}", flush=True)
    # Killed, the protocol takes its eval with it (which unwinds its running task and closes its sandbox).
    done = subprocess.run(with_lifeline(command), env=env, check=False)
    if done.returncode != 0:  # e.g. --resume refused results of another configuration under this label
        sys.exit(f"protocol: agentcli eval exited {done.returncode} for {label} {split}-w{wording}")
    return out


def record_machine(label: str, model: str) -> None:
    """The machine's speed with the model, measured at the first invocation under a label on each machine (a
    run has a wall clock: figures from machines of other speeds do not compare; a label resumed elsewhere
    shows both)."""
    path = RESULTS / label / "machine.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    measured = json.loads(path.read_text()) if path.is_file() else []
    host = socket.gethostname()
    if any(speed.get("host") == host for speed in measured):
        return  # once a machine: an ablation invokes the protocol once for each policy and set
    measured.append({"host": host, **measure(model)})
    path.write_text(json.dumps(measured, indent=1) + "\n")


def machines(labels: list[str]) -> str:
    lines = []
    for label in labels:
        path = RESULTS / label / "machine.json"
        for speed in json.loads(path.read_text()) if path.is_file() else []:
            lines.append(f"{label}: " + ", ".join(f"{key} {value}" for key, value in speed.items()))
    return "\n".join(lines)


# A task whose model ran this many times slower than the machine's measure ran beside other load:
# llama.cpp's threads wait on each other at every layer, so one busy core slows it several times over.
SLOWED = 2.5
# Policies whose extra calls within a step its journal does not cost apart (candidates also run checks).
_MORE_CALLS = ("select",)


def journal_events(result: dict) -> list[dict]:
    """The events of a task's run, from its agent journal; none where it left no journal."""
    journal = Path(result.get("trajectory") or "") / "agent.jsonl"
    if not journal.is_file():
        return []
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def _expected_seconds(event: dict, speed: dict) -> float:
    """How long the tokens a model call evaluated and wrote take at the machine's measured speed."""
    prompt = (event.get("prompt_evaluated") or 0) / speed["prompt_tok_s"]
    return prompt + event["completion_tokens"] / speed["generation_tok_s"]


def model_pace(result: dict, speed: dict) -> float | None:
    """How many times longer the model took in a task's run than the machine's measured speed predicts
    for the tokens it evaluated and wrote (1.2 to 2 on a quiet machine: the grammar, long prompts).

    A step whose reply was asked again counts both calls (its duration holds both); one that chose
    among candidates is left out: its duration holds their checks too."""
    if not speed.get("prompt_tok_s") or not speed.get("generation_tok_s"):
        return None
    took = expected = set_aside = 0.0
    with_candidates = False
    for event in journal_events(result):
        if event.get("type") == "policy_fired" and event.get("name") in _MORE_CALLS:
            with_candidates = True
        elif event.get("type") == "reply_asked_again":
            set_aside += _expected_seconds(event, speed)
        elif event.get("type") == "model_replied":
            if not with_candidates:
                took += event["duration"]
                expected += _expected_seconds(event, speed) + set_aside
            with_candidates, set_aside = False, 0.0
    return took / expected if expected else None


def slowed(label: str) -> str:
    """The tasks of a label whose model ran `SLOWED` times slower than the machine's measure, or ""."""
    path = RESULTS / label / "machine.json"
    speeds = json.loads(path.read_text()) if path.is_file() else []
    speed = next((s for s in speeds if s.get("host") == socket.gethostname()), speeds[0] if speeds else {})
    found = []
    for result_path in sorted((RESULTS / label).glob("*-w*.json")):
        for result in json.loads(result_path.read_text())["tasks"]:
            if (pace := model_pace(result, speed)) is not None and pace >= SLOWED:
                found.append(f"{result_path.stem} {result['task']} {pace:.1f}x")
    if not found:
        return ""
    why = f"the model ran {SLOWED:g}x or more slower than the machine's measure (other load?)"
    return f"{label}: {why}: " + ", ".join(found)


def malformed_replies(result: dict) -> int:
    """Replies of a task's run that held no usable action (a format error; not an objection or refusal)."""
    return sum(e.get("type") == "format_error" and not e.get("verdict") for e in journal_events(result))


def figures(paths: list[Path]) -> dict[str, float] | None:
    """Solved, tasks, means of steps, tokens and seconds, and malformed replies per 100 steps over the
    results in `paths`."""
    results = [r for p in paths if p.is_file() for r in json.loads(p.read_text())["tasks"] if r["status"] != "error"]
    if not results:
        return None
    n = len(results)
    steps = sum(r["steps"] for r in results)
    return {
        "solved": sum(r["reward"] == 1 for r in results),
        "tasks": n,
        "share": sum(r.get("test_share", 0) for r in results) / n,
        "steps": steps / n,
        "tokens": sum(r["tokens_in"] + r["tokens_out"] for r in results) / n,
        "seconds": sum(r["agent_seconds"] for r in results) / n,
        "malformed": 100 * sum(malformed_replies(r) for r in results) / max(steps, 1),
    }


# The sets reported apart: name, splits, wordings.
SETS = (("dev", ("dev",), (0,)), ("test", ("test",), (0,)), ("rewordings", SPLITS, (1, 2)))


def set_results(label: str, splits: tuple[str, ...], wordings: tuple[int, ...]) -> list[Path]:
    return [RESULTS / label / f"{split}-w{wording}.json" for split in splits for wording in wordings]


def table(labels: list[str]) -> str:
    rows = [
        "| run | set | solved | rate | tests passed | steps | tokens | agent s | malformed / 100 steps |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label in labels:
        for name, splits, wordings in SETS:
            f = figures(set_results(label, splits, wordings))
            if f is None:
                continue
            rows.append(
                f"| {label} | {name} | {f['solved']}/{f['tasks']} | {f['solved'] / f['tasks']:.0%} | {f['share']:.2f} "
                f"| {f['steps']:.1f} | {f['tokens']:.0f} | {f['seconds']:.0f} | {f['malformed']:.1f} |"
            )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="default", help="Where the results go, and their row in the table.")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=SPLITS)
    parser.add_argument("--wordings", nargs="+", type=int, default=list(WORDINGS), choices=WORDINGS)
    parser.add_argument("--tasks", nargs="+", help="Only these task ids.")
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    parser.add_argument("--sandbox", default="docker")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="The agent's policy profile (agentcli policies).")
    parser.add_argument("--policy", action="append", default=[], help="NAME=off or NAME=on (repeatable).")
    parser.add_argument("--candidates", type=int, default=1, help="Replies the tests choose from (1: off).")
    parser.add_argument("--report", nargs="*", metavar="LABEL", help="Print the table of these labels (all: none).")
    args = parser.parse_args()
    if args.report is not None:
        found = sorted(p.name for p in RESULTS.iterdir() if p.is_dir()) if RESULTS.is_dir() else []
        labels = args.report or found
        print(table(labels))
        print(machines(labels))
        print("\n".join(filter(None, map(slowed, labels))))
        return
    record_machine(args.label, args.model)
    for split in args.splits:
        for wording in args.wordings:
            run(args.label, split, wording, args)
    print(table([args.label]))
    print(machines([args.label]))
    print(slowed(args.label))


if __name__ == "__main__":
    main()
