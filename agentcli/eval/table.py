"""The results table and summary lines on the console."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentcli.eval.results import TaskResult, summarize


def progress_line(done: int, total: int, r: TaskResult) -> str:
    tests = f"{r.tests_passed}/{r.tests_total} tests" if r.tests_total else "no tests"
    extra = f" ({r.reason})" if r.status == "error" else ""
    steps = f"{r.steps} steps, {r.tokens} tokens, " if r.steps else ""
    return f"[{done}/{total}] {r.label}: {r.status}{extra}, reward {r.reward:g}, {tests}, {steps}{r.wall_seconds:.1f} s"


def results_table(results: list[TaskResult], title: str = "") -> Table:
    table = Table(title=title or None, box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("task", "left"),
        ("reward", "right"),
        ("tests", "right"),
        ("steps", "right"),
        ("tokens", "right"),
        ("time s", "right"),
        ("status", "left"),
        ("reason", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", min_width=len(name))
    for r in sorted(results, key=lambda r: r.key):
        style = "green" if r.reward else ("red" if r.status == "error" else None)
        table.add_row(
            r.label,
            f"{r.reward:g}",
            f"{r.tests_passed}/{r.tests_total}",
            str(r.steps),
            str(r.tokens),
            f"{r.wall_seconds:.1f}",
            r.agent_status if r.status != "error" else "error",
            _short(r.reason),
            style=style,
        )
    return table


def summary_line(results: list[TaskResult]) -> str:
    s = summarize(results)
    if s["rollouts"] > s["tasks"]:  # groups of rollouts: pass@k over the tasks
        ks = ", ".join(f"pass@{k} {v:.2f}" for k, v in s["pass_at_k"].items())
        line = f"passed {s['solved']}/{s['rollouts']} rollouts of {s['tasks']} tasks ({ks})"
        line += f", mean reward {s['mean_reward']:.2f}"
    else:
        line = f"solved {s['solved']}/{s['tasks']} ({100 * s['solve_rate']:.0f}%)"
    line += f", mean test share {s['mean_test_share']:.2f}"
    if s["errors"]:
        line += f", {s['errors']} errors"
    if s["solved"]:
        line += (
            f"; per solved task: {s['solved_mean_steps']:.1f} steps, {s['solved_mean_tokens']:.0f} tokens, "
            f"{s['solved_mean_seconds']:.1f} s"
        )
    return line + f"; {s['total_seconds']:.0f} s of task time"


def print_results(console: Console, results: list[TaskResult], title: str = "") -> None:
    console.print(results_table(results, title))
    console.print(summary_line(results))


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
