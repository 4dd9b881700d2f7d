"""Statistics of rollout groups: pass@k and the group-relative advantage GRPO-style trainers use."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any


def pass_at_k(n: int, correct: int, k: int) -> float:
    """The unbiased estimate of the chance that at least one of k rollouts, drawn from n of which
    `correct` passed, passes: 1 - C(n-c, k) / C(n, k)."""
    if k > n or n <= 0:
        raise ValueError(f"pass@{k} needs at least {k} rollouts, got {n}")
    if n - correct < k:
        return 1.0
    return 1.0 - math.comb(n - correct, k) / math.comb(n, k)


def advantages(rewards: list[float]) -> list[float]:
    """(reward - group mean) / group std (population); all 0 where the group's rewards are equal,
    since such a group carries no signal."""
    if not rewards:
        return []
    mean = statistics.fmean(rewards)
    std = statistics.pstdev(rewards)
    if std < 1e-9:
        return [0.0 for _ in rewards]
    return [round((r - mean) / std, 6) for r in rewards]


def ks_for(n: int) -> list[int]:
    """The k of pass@k reported for groups of n: 1, powers of two below n, and n."""
    ks = [1]
    while ks[-1] * 2 < n:
        ks.append(ks[-1] * 2)
    return [*ks, n] if n > 1 else ks


def group(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per task: its rollouts' samples, seeds and rewards, their mean and std, each one's
    advantage, and pass@k. `records` are result dicts (task, sample, seed, reward, status)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[record["task"]].append(record)
    groups = []
    for task in sorted(by_task):
        members = sorted(by_task[task], key=lambda r: r.get("sample") or 0)
        rewards = [float(r["reward"]) for r in members]
        passed = sum(1 for r in rewards if r >= 1)
        groups.append(
            {
                "task": task,
                "samples": [r.get("sample") for r in members],
                "seeds": [r.get("seed") for r in members],
                "rewards": rewards,
                "mean_reward": round(statistics.fmean(rewards), 6),
                "std_reward": round(statistics.pstdev(rewards), 6),
                "advantages": advantages(rewards),
                "errors": sum(1 for r in members if r.get("status") == "error"),
                "pass_at_k": {str(k): round(pass_at_k(len(rewards), passed, k), 6) for k in ks_for(len(rewards))},
            }
        )
    return groups


def mean_pass_at_k(groups: list[dict[str, Any]]) -> dict[str, float]:
    """pass@k averaged over the tasks, for every k all groups have."""
    if not groups:
        return {}
    common = set.intersection(*(set(g["pass_at_k"]) for g in groups))
    return {k: round(statistics.fmean(g["pass_at_k"][k] for g in groups), 4) for k in sorted(common, key=int)}
