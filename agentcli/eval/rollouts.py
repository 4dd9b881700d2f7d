"""Rollouts: one run of the agent on one task. `--samples N` makes N of them per task, a group.

Each rollout of a group has its own seed (the eval's `--seed`, by default 1, plus its index: never
0, which is "no seed" to a hosted model), its own sandbox and
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
        return rollout_key(self.task.id, self.sample)

    @property
    def record_path(self) -> str:
        """Where its records go, relative to the eval's trajectories folder."""
        return self.task.id if self.sample is None else f"{self.task.id}/sample-{self.sample}"


def rollout_key(task_id: str, sample: int | None) -> tuple[str, int]:
    """What identifies a rollout in an eval (and in its results, for --resume): the task and the
    sample, -1 for the one rollout of an ungrouped eval."""
    return (task_id, -1 if sample is None else sample)


DEFAULT_GROUP_SEED = 1


def plan(tasks: list[Task], samples: int = 1, base_seed: int | None = None) -> list[Rollout]:
    """Every rollout of the eval, a task's samples next to each other; one sample per task runs with
    `base_seed` where one is given, else with the configured seed."""
    if samples <= 1:
        return [Rollout(task, seed=base_seed) for task in tasks]
    base = DEFAULT_GROUP_SEED if base_seed is None else base_seed
    return [Rollout(task, i, base + i) for task in tasks for i in range(samples)]
