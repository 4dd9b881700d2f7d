"""Ablation: the protocol with each policy switched off in turn, beside the run with all on.

  python3 benchmarks/ablation.py --policies outputs tests retries --splits test --wordings 0
  python3 benchmarks/ablation.py --task-readers            # every policy that reads the task's wording
  python3 benchmarks/ablation.py --report                  # the table of what has run

Each row is a label `off-NAME` of benchmarks/protocol.py (so interrupted runs go on with --resume);
the baseline is the label `default`. What a policy adds is the baseline's solved count less the row's:
one that adds nothing on the test split and the rewordings goes (docs/eval.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.policies import CATALOG  # noqa: E402
from benchmarks.protocol import RESULTS, SETS, SPLITS, WORDINGS, figures, set_results  # noqa: E402


def added(label: str, baseline: str = "default") -> str:
    """Per set (dev, test, rewordings): the baseline's solved count less this label's."""
    cells = []
    for _, splits, wordings in SETS:
        base, off = figures(set_results(baseline, splits, wordings)), figures(set_results(label, splits, wordings))
        cells.append("" if base is None or off is None else f"{base['solved'] - off['solved']:+d} of {off['tasks']}")
    return " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=[])
    parser.add_argument("--task-readers", action="store_true", help="Every policy that reads the task's wording.")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=SPLITS)
    parser.add_argument("--wordings", nargs="+", type=int, default=list(WORDINGS), choices=WORDINGS)
    parser.add_argument("--report", action="store_true")
    args, rest = parser.parse_known_args()
    names = args.policies + [p.name for p in CATALOG if args.task_readers and p.reads_task]
    if args.report:
        names = sorted(p.name.removeprefix("off-") for p in RESULTS.glob("off-*") if p.is_dir())
    else:
        protocol = [sys.executable, str(ROOT / "benchmarks" / "protocol.py"), "--splits", *args.splits]
        protocol += ["--wordings", *map(str, args.wordings), *rest]
        subprocess.run([*protocol, "--label", "default"], check=True)
        for name in names:
            subprocess.run([*protocol, "--label", f"off-{name}", "--policy", f"{name}=off"], check=True)
    print("| policy off | adds on dev | adds on test | adds on rewordings |\n|---|---|---|---|")
    for name in names:
        print(f"| {name} | {added(f'off-{name}')} |")


if __name__ == "__main__":
    main()
