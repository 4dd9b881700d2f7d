"""Ablation: the protocol with each policy switched off in turn, beside the run with all on.

  python3 benchmarks/ablation.py --policies outputs tests retries --splits test --wordings 0
  python3 benchmarks/ablation.py --task-readers            # every policy that reads the task's wording
  python3 benchmarks/ablation.py --where-fired --splits test # rerun only where each policy fired
  python3 benchmarks/ablation.py --fired                   # where each policy fired in the baseline
  python3 benchmarks/ablation.py --report                  # the table of what has run

Each row is a label `off-NAME` of benchmarks/protocol.py (so interrupted runs go on with --resume);
the baseline is the label `default`. What a policy adds is the baseline's solved count less the row's:
one that adds nothing on the test split and the rewordings goes (docs/eval.md).

A policy that never fired in a task's run (no `policy_fired` event of its name in the journal) did not
change that run: with it off, the task runs the same (replies are seeded from the prompt), up to the
time its unused checks took. `--where-fired` reruns each policy's row only on the tasks where it fired
in the baseline and takes the baseline's result for the others.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.policies import CATALOG  # noqa: E402
from benchmarks.protocol import RESULTS, SETS, SPLITS, WORDINGS, figures, set_results  # noqa: E402


def fired_in(results: Path) -> dict[str, set[str]]:
    """Per policy, the tasks of a results file whose journal records it firing."""
    fired: dict[str, set[str]] = {}
    for result in json.loads(results.read_text())["tasks"] if results.is_file() else []:
        journal = Path(result.get("trajectory") or "") / "agent.jsonl"
        lines = journal.read_text().splitlines() if journal.is_file() else []
        for event in map(json.loads, filter(str.strip, lines)):
            if event.get("type") == "policy_fired":
                fired.setdefault(event["name"], set()).add(result["task"])
    return fired


def merged(off: Path, baseline: Path) -> Path:
    """The baseline's results with the tasks rerun in `off` in their place (`--where-fired`), written beside `off`."""
    if not baseline.is_file():
        return off
    rerun = {r["task"]: r for r in json.loads(off.read_text())["tasks"]} if off.is_file() else {}
    whole = json.loads(baseline.read_text())
    whole["tasks"] = [rerun.get(r["task"], r) for r in whole["tasks"]]
    path = off.with_suffix(".merged.json")
    path.write_text(json.dumps(whole))
    return path


def added(label: str, baseline: str = "default") -> str:
    """Per set (dev, test, rewordings): the baseline's solved count less this label's."""
    cells = []
    for _, splits, wordings in SETS:
        base_paths = set_results(baseline, splits, wordings)
        off_paths = [merged(o, b) for o, b in zip(set_results(label, splits, wordings), base_paths, strict=True)]
        base, off = figures(base_paths), figures(off_paths)
        cells.append("" if base is None or off is None else f"{base['solved'] - off['solved']:+d} of {off['tasks']}")
    return " | ".join(cells)


def fired_table(baseline: str = "default") -> str:
    """In how many tasks of each set each policy fired in the baseline's runs."""
    counts: dict[str, Counter[str]] = {}
    for name, splits, wordings in SETS:
        for path in set_results(baseline, splits, wordings):
            for policy, tasks in fired_in(path).items():
                counts.setdefault(policy, Counter())[name] += len(tasks)
    rows = ["| policy | fired in dev tasks | test | rewordings |", "|---|---|---|---|"]
    for policy in CATALOG:
        count = counts.get(policy.name, Counter())
        rows.append(f"| {policy.name} | {count['dev']} | {count['test']} | {count['rewordings']} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=[])
    parser.add_argument("--task-readers", action="store_true", help="Every policy that reads the task's wording.")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=SPLITS)
    parser.add_argument("--wordings", nargs="+", type=int, default=list(WORDINGS), choices=WORDINGS)
    parser.add_argument("--where-fired", action="store_true", help="Rerun a policy's row only where it fired.")
    parser.add_argument("--fired", action="store_true", help="Where each policy fired in the baseline.")
    parser.add_argument("--report", action="store_true")
    args, rest = parser.parse_known_args()
    names = args.policies + [p.name for p in CATALOG if args.task_readers and p.reads_task]
    if args.fired:
        print(fired_table())
        return
    if args.report:
        names = sorted(p.name.removeprefix("off-") for p in RESULTS.glob("off-*") if p.is_dir())
    else:
        protocol = [sys.executable, str(ROOT / "benchmarks" / "protocol.py")]
        subprocess.run([*protocol, "--splits", *args.splits, "--wordings", *map(str, args.wordings), *rest,
                        "--label", "default"], check=True)  # fmt: skip
        for name in names:
            for split in args.splits:
                for wording in args.wordings:
                    tasks = sorted(fired_in(RESULTS / "default" / f"{split}-w{wording}.json").get(name, ()))
                    if args.where_fired and not tasks:
                        continue  # it fired nowhere: the row is the baseline's
                    only = ["--tasks", *tasks] if args.where_fired else []
                    subprocess.run([*protocol, "--splits", split, "--wordings", str(wording), *only, *rest,
                                    "--label", f"off-{name}", "--policy", f"{name}=off"], check=True)  # fmt: skip
    print("| policy off | adds on dev | adds on test | adds on rewordings |\n|---|---|---|---|")
    for name in names:
        print(f"| {name} | {added(f'off-{name}')} |")


if __name__ == "__main__":
    main()
