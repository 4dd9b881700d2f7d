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
    """One entry per task: its rollouts' samples, seeds, statuses and rewards; over those that ran
    (not `error`: a worker lost, an image that did not build), the mean and std reward, each one's
    advantage (None for an error) and pass@k. `records` are result dicts (task, sample, seed,
    reward, status)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[record["task"]].append(record)
    groups = []
    for task in sorted(by_task):
        members = sorted(by_task[task], key=lambda r: r.get("sample") or 0)
        rewards = [float(r["reward"]) for r in members]
        ran = [float(r["reward"]) for r in members if r.get("status") != "error"]
        scored = iter(advantages(ran))
        passed = sum(1 for r in ran if r >= 1)
        pass_at = {str(k): round(pass_at_k(len(ran), passed, k), 6) for k in ks_for(len(ran))} if ran else {}
        groups.append(
            {
                "task": task,
                "samples": [r.get("sample") for r in members],
                "seeds": [r.get("seed") for r in members],
                "statuses": [r.get("status") for r in members],
                "rewards": rewards,
                "mean_reward": round(statistics.fmean(ran), 6) if ran else 0.0,
                "std_reward": round(statistics.pstdev(ran), 6) if ran else 0.0,
                "advantages": [None if r.get("status") == "error" else next(scored) for r in members],
                "errors": len(members) - len(ran),
                "pass_at_k": pass_at,
            }
        )
    return groups


def mean_pass_at_k(groups: list[dict[str, Any]]) -> dict[str, float]:
    """pass@k averaged over the tasks, for every k all groups have."""
    groups = [g for g in groups if g["pass_at_k"]]
    if not groups:
        return {}
    common = set.intersection(*(set(g["pass_at_k"]) for g in groups))
    return {k: round(statistics.fmean(g["pass_at_k"][k] for g in groups), 4) for k in sorted(common, key=int)}
