"""Per-task results and the results file: JSON, written after every task, read back by --resume."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.eval.groups import group, mean_pass_at_k
from agentcli.eval.rollouts import rollout_key

SCHEMA_VERSION = 1
SCORED = ("passed", "failed")  # a task with one of these statuses is done; --resume skips it


@dataclass
class TaskResult:
    task: str
    status: str  # passed | failed | error
    sample: int | None = None  # its index in the task's group of rollouts (--samples); None: one per task
    seed: int | None = None  # the agent's sampling seed, where the eval set one
    reward: float = 0  # 1 or 0 for agentcli's tasks; a Harbor verifier may give a share
    tests_passed: int = 0
    tests_total: int = 0
    test_share: float = 0.0
    agent_status: str = ""  # finished | failed | interrupted | error | timeout
    agent_exit_code: int | None = None  # how the agent's process (or the oracle's solution) exited
    test_exit_code: int | None = None  # how the tests (or the verifier) exited; None: they did not run
    reason: str = ""
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    agent_seconds: float = 0.0
    test_seconds: float = 0.0
    wall_seconds: float = 0.0
    difficulty: str = ""
    category: str = ""
    trajectory: str = ""
    attempts: int = 1  # more than 1: the rollout was run again after its worker died (--ray)

    @property
    def key(self) -> tuple[str, int]:
        return rollout_key(self.task, self.sample)

    @property
    def label(self) -> str:
        return self.task if self.sample is None else f"{self.task}#{self.sample}"

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskResult:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class RunInfo:
    """What an eval ran with: results of different runs must not be mixed by --resume."""

    agent: str
    model: str = ""
    suite: str = ""
    sandbox: str = ""
    timeout: float = 0.0
    max_steps: int | None = None
    workers: int = 1
    samples: int = 1
    seed: int | None = None  # the first rollout's; None: the configured one
    temperature: float | None = None
    policies: str = ""  # the profile and switches: "small-local", "general,retries=off"
    trajectories: str = ""
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))


def summarize(results: list[TaskResult], groups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Figures over the rollouts (one per task unless --samples): `solve_rate` is pass@1; `pass_at_k`
    the mean over tasks of each k the groups allow."""
    solved = [r for r in results if r.reward == 1]
    n = len(results)
    groups = group_results(results) if groups is None else groups

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 3) if values else 0.0

    return {
        "tasks": len(groups),
        "rollouts": n,
        "solved": len(solved),
        "solve_rate": round(len(solved) / n, 4) if n else 0.0,
        "mean_reward": mean([r.reward for r in results]),
        "mean_test_share": mean([r.test_share for r in results]),
        "pass_at_k": mean_pass_at_k(groups),
        "errors": sum(1 for r in results if r.status == "error"),
        # Per solved task, as the targets are stated.
        "solved_mean_steps": mean([r.steps for r in solved]),
        "solved_mean_tokens": mean([r.tokens for r in solved]),
        "solved_mean_seconds": mean([r.agent_seconds for r in solved]),
        "total_seconds": round(sum(r.wall_seconds for r in results), 1),
    }


def group_results(results: list[TaskResult]) -> list[dict[str, Any]]:
    return group([r.to_dict() for r in results])


def document(info: RunInfo, results: list[TaskResult], *, interrupted: bool = False) -> dict[str, Any]:
    ordered = sorted(results, key=lambda r: r.key)
    groups = group_results(ordered)
    return {
        "schema_version": SCHEMA_VERSION,
        **dataclasses.asdict(info),
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "complete": not interrupted,
        "summary": summarize(ordered, groups),
        "tasks": [r.to_dict() for r in ordered],
        "groups": groups,
    }


def write(path: Path, info: RunInfo, results: list[TaskResult], *, interrupted: bool = False) -> None:
    """Atomically: a reader (or a kill mid-write) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(document(info, results, interrupted=interrupted), indent=2) + "\n")
    os.replace(tmp, path)


def load_done(path: Path, info: RunInfo) -> list[TaskResult]:
    """The scored rollouts of an earlier run of the same agent, model and seed, for --resume."""
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        tasks = [TaskResult.from_dict(t) for t in data.get("tasks", [])]
    except (OSError, json.JSONDecodeError, TypeError, AttributeError) as e:
        raise UsageError(f"cannot resume from {path}: not an eval results file ({e})") from None
    for key in ("agent", "model", "seed", "temperature", "policies"):
        if str(data.get(key, getattr(RunInfo(agent=""), key))) != str(getattr(info, key)):
            raise UsageError(
                f"cannot resume from {path}: it holds a run with {key} {data.get(key)!r}, not {getattr(info, key)!r}"
            )
    if (int(data.get("samples", 1)) > 1) != (info.samples > 1):
        raise UsageError(f"cannot resume from {path}: one run has groups of rollouts (--samples), the other not")
    return [t for t in tasks if t.status in SCORED]


def append_stream(path: Path, result: TaskResult) -> None:
    """Append one finished task as a JSON line, synced to disk, for a learner tailing the file: its
    result and, where one was written, its ATIF trajectory."""
    record: dict[str, Any] = result.to_dict()
    atif = Path(result.trajectory) / "trajectory.atif.json" if result.trajectory else None
    if atif is not None and atif.is_file():
        record["atif"] = json.loads(atif.read_text())
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
