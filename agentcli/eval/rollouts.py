"""Rollouts: one run of the agent on one task. `--samples N` makes N of them per task, a group.

Each rollout of a group has its own seed (the eval's `--seed` plus its index), its own sandbox and
work dir, and its own record folder (`<task>/sample-<i>/`); with one sample per task the records
stay in `<task>/` and results carry no sample number.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.eval.tasks import Task


@dataclass(frozen=True)
class Rollout:
    task: Task
    sample: int | None = None  # index in its group; None: the eval runs one sample per task
    seed: int | None = None  # the agent's sampling seed; None: the configured one

    @property
    def key(self) -> tuple[str, int]:
        return (self.task.id, self.sample or 0)

    @property
    def record_path(self) -> str:
        """Where its records go, relative to the eval's trajectories folder."""
        return self.task.id if self.sample is None else f"{self.task.id}/sample-{self.sample}"

    @property
    def label(self) -> str:
        return self.task.id if self.sample is None else f"{self.task.id}#{self.sample}"


def plan(tasks: list[Task], samples: int = 1, base_seed: int = 0) -> list[Rollout]:
    """Every rollout of the eval, a task's samples next to each other."""
    if samples <= 1:
        return [Rollout(task, seed=base_seed or None) for task in tasks]
    return [Rollout(task, i, base_seed + i) for task in tasks for i in range(samples)]
