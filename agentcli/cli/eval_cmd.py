"""`agentcli eval SUITE_DIR`: run a task suite through agentcli (or its oracle, or a no-op) and score it."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from agentcli.errors import EXIT_INTERRUPTED, EXIT_NOT_FINISHED, EXIT_UNAVAILABLE, UsageError


def eval_command(
    suite: Path = typer.Argument(
        ..., help="Folder of task folders (e.g. benchmarks/tasks).", metavar="SUITE_DIR", show_default=False
    ),
    tasks: list[str] = typer.Option(None, "--tasks", help="Only these task ids (comma-separated or repeated)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Wall-clock seconds for the agent on each task."),
    workers: int = typer.Option(1, "--workers", "-j", help="Tasks run at the same time."),
    model: str = typer.Option(None, "--model", "-m", help="provider/model, local/NAME, or scripted:FILE."),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    sandbox: str = typer.Option(None, "--sandbox", help="auto, docker, bwrap or host."),
    max_steps: int = typer.Option(None, "--max-steps", help="Stop each run after this many model calls."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the results as JSON to this file."),
    trajectories: Path = typer.Option(
        None, "--trajectories", help="Where each task's records go (default: beside --out, or .agentcli/eval/TIME)."
    ),
    oracle: bool = typer.Option(False, "--oracle", help="Run each task's solution.sh instead: every task must pass."),
    noop: bool = typer.Option(False, "--noop", help="Do nothing instead of the agent: every task must fail."),
    resume: bool = typer.Option(False, "--resume", help="Skip the tasks already scored in --out."),
    trajectory_format: str = typer.Option(
        "jsonl", "--trajectory-format", help="jsonl (the journal), or atif: an ATIF trajectory beside it too."
    ),
    stream: Path = typer.Option(
        None, "--stream", help="Append each finished task to FILE as one JSON line (a learner can tail it)."
    ),
    samples: int = typer.Option(1, "--samples", "-n", help="Rollouts per task, each with its own seed: a group."),
    seed: int = typer.Option(
        None, "--seed", help="The first rollout's sampling seed (default 1 for groups); sample i gets SEED+i."
    ),
    temperature: float = typer.Option(
        None, "--temperature", help="The agent's sampling temperature (default: as configured)."
    ),
    ray: str = typer.Option(
        None,
        "--ray",
        help="Run the rollouts on a Ray cluster: auto, an ADDRESS (host:port), or local.",
        metavar="ADDRESS",
    ),
    ray_retries: int = typer.Option(2, "--ray-retries", help="Times a rollout is run again after its Ray worker died."),
    profile: str = typer.Option(None, "--profile", help="The agent's policies to start from (`agentcli policies`)."),
    candidates: int = typer.Option(
        None, "--candidates", help="Replies sampled at a step that changes code; the tests choose (1: off)."
    ),
    policy: list[str] = typer.Option(None, "--policy", help="Switch one policy: NAME=off or NAME=on (repeatable)."),
) -> None:
    """Run every task of SUITE_DIR in a fresh work dir and score it with the task's tests.

    Exit status: 0 when every task ran (whatever the rewards); 1 when --oracle or --noop finds the
    suite unsound; 2 for bad input; 3 when the model or sandbox is unavailable; 130 when interrupted.
    """
    from agentcli.eval import results as res
    from agentcli.eval import rollouts
    from agentcli.eval.agents import RUNNERS, RunConfig
    from agentcli.eval.suite import run_suite
    from agentcli.eval.table import print_results, progress_line
    from agentcli.eval.tasks import load_suite, split_ids

    if oracle and noop:
        raise UsageError("--oracle and --noop exclude each other")
    if trajectory_format not in ("jsonl", "atif"):
        raise UsageError(f"unknown --trajectory-format {trajectory_format!r}: use jsonl or atif")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    if timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {timeout:g}")
    if samples < 1:
        raise UsageError(f"--samples must be at least 1, got {samples}")
    if temperature is not None and temperature < 0:
        raise UsageError(f"--temperature must not be negative, got {temperature:g}")
    if ray_retries < 0:
        raise UsageError(f"--ray-retries must not be negative, got {ray_retries}")
    if resume and out is None:
        raise UsageError("--resume needs --out FILE: the results of the run to resume")
    kind = "oracle" if oracle else "noop" if noop else "agentcli"
    selected = load_suite(suite, split_ids(tasks) or None)
    config = RunConfig(timeout=timeout, max_steps=max_steps, trajectory_format=trajectory_format)
    console = _console()
    sampling = None
    if kind == "agentcli":
        settings = _agent_settings(model, sandbox, api_base, max_steps, temperature, console)
        config.model, config.sandbox, config.api_base, sampling = settings
        if temperature is not None:
            config.env["AGENTCLI_TEMPERATURE"] = f"{temperature:g}"
        config.env.update(_policy_env(profile, policy or []))
        if candidates is not None:
            if candidates < 1:
                raise UsageError(f"--candidates must be at least 1, got {candidates}")
            config.env["AGENTCLI_CANDIDATES"] = str(candidates)
        if samples > 1 and not sampling:
            console.print(
                f"note: temperature 0: the {samples} rollouts of a task differ only where the model or the "
                "sandbox is not deterministic (set --temperature)",
                markup=False,
            )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    traj_root = (trajectories or _default_trajectories(out, stamp)).resolve()
    results_path = out or traj_root / "results.json"
    everything = rollouts.plan(selected, samples, seed)
    info = res.RunInfo(
        agent=kind,
        model=config.model,
        suite=str(suite.resolve()),
        sandbox=config.sandbox,
        timeout=timeout,
        max_steps=max_steps,
        workers=workers,
        samples=samples,
        seed=everything[0].seed if everything else seed,
        temperature=sampling,
        policies=",".join(filter(None, [profile or "", *(policy or []), _candidates_switch(candidates)]))
        if kind == "agentcli"
        else "",
        trajectories=str(traj_root),
    )
    unit = "rollouts" if samples > 1 else "tasks"
    wanted = {r.key for r in everything}
    done = res.load_done(results_path, info) if resume else []
    kept = [r for r in done if r.key in wanted]
    kept_keys = {r.key for r in kept}
    todo = [r for r in everything if r.key not in kept_keys]

    what = f"agent {kind}" + (f", model {config.model}, sandbox {config.sandbox}" if kind == "agentcli" else "")
    console.print(
        f"eval: {len(selected)} tasks from {suite}"
        + (f", {samples} samples each (seeds from {everything[0].seed})" if samples > 1 and everything else "")
        + f", {what}, timeout {timeout:g} s, "
        + (f"on Ray ({ray})" if ray else f"{workers} worker{'s' * (workers > 1)}")
        + f"; records in {traj_root}"
    )
    if resume:
        console.print(f"resume: {len(kept)} {unit} already scored in {results_path}, {len(todo)} to run")
    if kind == "agentcli" and workers > 1 and config.model.startswith("local/"):
        console.print("note: each worker loads its own copy of the local model (memory and cores are shared)")

    collected = list(kept)
    counter = [len(kept)]

    def on_result(result: res.TaskResult) -> None:
        collected.append(result)
        counter[0] += 1
        console.print(progress_line(counter[0], len(everything), result), markup=False)
        res.write(results_path, info, collected, interrupted=True)  # complete only once all are in
        if stream is not None:
            res.append_stream(stream, result)

    traj_root.mkdir(parents=True, exist_ok=True)
    if ray:
        from agentcli.eval.ray_cluster import run_on_ray

        run = run_on_ray(todo, kind, config, traj_root, address=ray, retries=ray_retries, on_result=on_result)
    else:
        run = run_suite(todo, RUNNERS[kind](config), traj_root, workers=workers, on_result=on_result)
    finished = not run.interrupted and not run.fatal
    res.write(results_path, info, collected, interrupted=not finished)

    console.print()
    print_results(console, collected, title=f"{kind} on {suite}")
    console.print(f"results: {results_path}")
    if run.interrupted:
        console.print(f"interrupted: {len(everything) - len(collected)} {unit} not run; --resume runs them")
        raise typer.Exit(EXIT_INTERRUPTED)
    if run.fatal:
        console.print(f"stopped: {run.fatal}")
        raise typer.Exit(EXIT_UNAVAILABLE)
    if kind != "agentcli" and not _self_check(console, kind, collected):
        raise typer.Exit(EXIT_NOT_FINISHED)


def _console():
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:  # a log file or CI: wide enough for the table's rows to stay whole
        console = Console(highlight=False, width=160)
    return console


def _agent_settings(
    model: str | None, sandbox: str | None, api_base: str | None, max_steps: int | None, temperature, console
):
    """The model, sandbox, server and temperature every task will use, checked once before any task starts."""
    from agentcli.config import load_settings
    from agentcli.eval.preflight import check_model
    from agentcli.models.resolve import default_model_name
    from agentcli.sandbox.factory import resolve_backend

    flags = {
        "model": model,
        "sandbox": sandbox,
        "api_base": api_base,
        "max_steps": max_steps,
        "temperature": temperature,
    }
    settings = load_settings(None, flags)
    backend = resolve_backend(settings.sandbox)  # unavailable: exit 3 now, not once per task
    name = check_model(
        settings.model or default_model_name(), settings, notify=lambda message: console.print(message, markup=False)
    )
    return name, backend, settings.api_base, settings.temperature


def _default_trajectories(out: Path | None, stamp: str) -> Path:
    if out is not None:
        return out.parent / f"{out.stem}-trajectories"
    return Path(".agentcli") / "eval" / stamp


def _self_check(console, kind: str, results) -> bool:
    """--oracle: every task passes; --noop: every task fails (and none is malformed)."""
    if kind == "oracle":
        wrong = [r.task for r in results if r.reward != 1]
        verdict = "every task passed with its solution" if not wrong else "did not pass: " + ", ".join(wrong)
    else:
        wrong = [r.task for r in results if r.reward != 0 or r.status == "error"]
        verdict = "every task failed with nothing done" if not wrong else "not failed as it should: " + ", ".join(wrong)
    console.print(f"self-check ({kind}): {'ok' if not wrong else 'NOT OK'}: {verdict}", markup=False)
    return not wrong


def _candidates_switch(candidates: int | None) -> str:
    """How choosing between candidate replies reads among a run's policies ("" when off)."""
    return f"candidates={candidates}" if candidates and candidates > 1 else ""


def _policy_env(profile: str | None, switches: list[str]) -> dict[str, str]:
    """The settings that choose each rollout's policies (checked here: a bad name fails the eval, not each run)."""
    from agentcli.policies import DEFAULT_PROFILE, Policies

    Policies.chosen(profile or DEFAULT_PROFILE, switches)
    env = {"AGENTCLI_PROFILE": profile} if profile else {}
    return env | ({"AGENTCLI_POLICIES": ",".join(switches)} if switches else {})
