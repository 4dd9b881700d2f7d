"""Rollouts on a Ray cluster (`agentcli eval --ray`): each rollout a Ray task, its records shipped back.

The driver (this process) packs each task folder once into Ray's object store; a Ray task unpacks it
in a scratch folder on its node and runs the rollout exactly as a local eval does (a child
`agentcli solve` in its sandbox, then the tests), and returns the result with its record folder
packed. Nodes need agentcli installed, the model (a local model is pulled on first use), and, for
the Docker sandbox or Harbor tasks, an engine with the sandbox image: such a node declares the
custom resource `docker` (`ray start --resources '{"docker": 1}'`). A rollout whose worker dies
(killed, out of memory, its node lost) runs again on any node, up to `retries` times; its result
says how many attempts it took.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import shutil
import signal
import socket
import tarfile
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.eval.agents import RUNNERS, RunConfig
from agentcli.eval.results import TaskResult
from agentcli.eval.rollouts import Rollout
from agentcli.eval.suite import SuiteRun
from agentcli.lifeline import process_alive

SCRATCH = "agentcli-rollouts"  # under each node's temporary folder: one folder per rollout attempt
CANCEL_GRACE_S = 30.0  # how long cancelled rollouts get to stop their children when the eval is interrupted
DOCKER = "docker"  # the custom resource of nodes that have a Docker engine and the sandbox image


def run_on_ray(
    rollouts: list[Rollout],
    kind: str,
    config: RunConfig,
    trajectories: Path,
    *,
    address: str,
    retries: int = 2,
    on_result: Callable[[TaskResult], None] = lambda result: None,
) -> SuiteRun:
    """Run `rollouts` as Ray tasks on the cluster at `address` (`auto`, `host:port`, or `local` for
    one started here for this eval); `on_result` is called here as each one finishes."""
    from agentcli.session.solve import Terminated, signals_interrupt

    ray = _import_ray()
    eval_id = uuid.uuid4().hex[:12]
    _connect(ray, address)
    run = SuiteRun()
    try:
        needs = _resources(ray, rollouts, kind, config)
        remote = ray.remote(_rollout).options(max_retries=0, **needs)
        tasks = {r.task.id: r.task for r in rollouts}
        blobs = {task_id: ray.put(pack(task.dir)) for task_id, task in tasks.items()}  # once per task
        config_fields = dataclasses.asdict(config)
        attempts: dict[tuple[str, int], int] = {}

        def submit(rollout: Rollout):
            attempts[rollout.key] = attempts.get(rollout.key, 0) + 1
            return remote.remote(
                blobs[rollout.task.id],
                rollout.task.id,
                rollout.sample,
                rollout.seed,
                kind,
                config_fields,
                eval_id,
                attempts[rollout.key],
            )

        pending = {submit(r): r for r in rollouts}
        try:
            with signals_interrupt(signal.SIGTERM, signal.SIGHUP):
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                    for ref in ready:
                        rollout = pending.pop(ref)
                        result, fatal = _collect(ray, ref, rollout, attempts[rollout.key], retries, trajectories)
                        if result is None:  # its worker died: once more, elsewhere if need be
                            pending[submit(rollout)] = rollout
                            continue
                        run.results.append(result)
                        on_result(result)
                        if fatal and not run.fatal:
                            run.fatal = fatal
                            _cancel(ray, pending)
                            pending.clear()
        except (KeyboardInterrupt, Terminated):
            run.interrupted = True
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C waits for the cancel
            try:
                _cancel(ray, pending)
            finally:
                signal.signal(signal.SIGINT, previous)
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        shutil.rmtree(Path(tempfile.gettempdir()) / SCRATCH / eval_id, ignore_errors=True)
    return run


def _import_ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'agentcli[ray]'") from None
    return ray


def _connect(ray, address: str) -> None:
    kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False, "configure_logging": True}
    try:
        if address == "local":  # a cluster of this machine alone, for this eval
            cpus = os.cpu_count() or 1
            resources = {DOCKER: float(cpus)} if _docker_here() else {}
            ray.init(num_cpus=cpus, resources=resources, include_dashboard=False, **kwargs)
        else:
            _check_reachable(address)
            ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ComponentUnavailable(f"cannot reach a Ray cluster at {address}: {_gist(e)}") from None


def _check_reachable(address: str, timeout: float = 10.0) -> None:
    """A `host:port` nobody listens at fails now, in one line (Ray itself retries for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # `auto`, or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise ComponentUnavailable(f"cannot reach a Ray cluster at {address}: {e.strerror or e}") from None


def _docker_here() -> bool:
    from agentcli.sandbox.factory import docker_ready

    return docker_ready()


def _resources(ray, rollouts: list[Rollout], kind: str, config: RunConfig) -> dict[str, Any]:
    """What each rollout asks of its node: a CPU, and a Docker engine where it runs containers."""
    docker = any(r.task.harbor is not None for r in rollouts) or (kind == "agentcli" and config.sandbox == "docker")
    if not docker:
        return {"num_cpus": 1}
    if ray.cluster_resources().get(DOCKER, 0) <= 0:
        raise UsageError(
            "no node of the Ray cluster has a Docker engine for these rollouts: start such nodes with "
            """ray start ... --resources '{"docker": 1}'"""
        )
    return {"num_cpus": 1, "resources": {DOCKER: 0.001}}


def _collect(ray, ref, rollout: Rollout, attempt: int, retries: int, trajectories: Path):
    """The rollout's result with its records unpacked under `trajectories`, and whether no later rollout
    can run either; (None, "") when its worker died and it may run again."""
    from ray import exceptions as rx

    died = (rx.WorkerCrashedError, rx.NodeDiedError, rx.LocalRayletDiedError, rx.OutOfMemoryError, rx.ObjectLostError)
    try:
        data, records, fatal = ray.get(ref)
    except died as e:
        if attempt <= retries:
            return None, ""
        return _error(rollout, attempt, f"its Ray worker died {attempt} times: {_gist(e)}"), ""
    except rx.RayError as e:  # our code raised on the worker, the task was cancelled, Ray itself failed
        return _error(rollout, attempt, f"on the Ray cluster: {_gist(e)}"), ""
    result = TaskResult.from_dict(data)
    out_dir = trajectories / rollout.record_path
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        unpack(records, out_dir)
    except (OSError, tarfile.TarError) as e:
        result.reason = f"its records could not be unpacked: {e}; {result.reason}"
    result.trajectory, result.attempts = str(out_dir), attempt
    if attempt > 1:
        note = f"run {attempt} times: its Ray worker died"
        result.reason = f"{note}; {result.reason}" if result.reason else note
    return result, fatal


def _error(rollout: Rollout, attempt: int, reason: str) -> TaskResult:
    task = rollout.task
    return TaskResult(
        task=task.id,
        status="error",
        sample=rollout.sample,
        seed=rollout.seed,
        reason=reason,
        difficulty=task.difficulty,
        category=task.category,
        attempts=attempt,
    )


def _cancel(ray, pending: dict) -> None:
    """Cancel what is left; a running rollout gets KeyboardInterrupt and stops its children."""
    for ref in pending:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    if pending:
        with contextlib.suppress(Exception):
            ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_GRACE_S)


def _gist(error: BaseException) -> str:
    """The line of an error that says what happened (Ray's end with it, after the worker's traceback)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[-1] if lines else type(error).__name__)[:300]


# --- on the worker ------------------------------------------------------------------------------


def _rollout(
    task_blob: bytes,
    task_id: str,
    sample: int | None,
    seed: int | None,
    kind: str,
    config_fields: dict,
    eval_id: str,
    attempt: int,
) -> tuple[dict[str, Any], bytes, str]:
    """One rollout on a Ray worker: its result, its record folder packed, and why no later rollout can
    run (empty if they can)."""
    from agentcli.eval.procs import Children
    from agentcli.eval.runner import run_task
    from agentcli.eval.tasks import load_task

    root = Path(tempfile.gettempdir()) / SCRATCH / eval_id
    sweep(root)
    scratch = root / f"{task_id}-{sample or 0}-{attempt}-{socket.gethostname()}-{os.getpid()}"
    children = Children()
    try:
        scratch.mkdir(parents=True)
        unpack(task_blob, scratch / "task" / task_id)
        rollout = Rollout(load_task(scratch / "task" / task_id), sample, seed)
        runner = RUNNERS[kind](RunConfig(**config_fields))
        try:
            result, agent = run_task(rollout, runner, children, scratch / "records", scratch=scratch)
        except KeyboardInterrupt:  # ray.cancel: the eval is being interrupted
            children.stop_all()
            raise
        return result.to_dict(), pack(scratch / "records" / rollout.record_path), agent.fatal if agent else ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def sweep(root: Path) -> None:
    """Remove the scratch folders of this eval's rollouts whose worker on this host died (each is named
    after its host and pid: nodes may share a temporary folder)."""
    host = socket.gethostname()
    with contextlib.suppress(OSError):
        for folder in root.iterdir():
            rest, _, pid = folder.name.rpartition("-")
            if rest.endswith(f"-{host}") and pid.isdigit() and not process_alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)


# --- folders as bytes ---------------------------------------------------------------------------


def pack(folder: Path) -> bytes:
    """A folder as a gzip'd tar (links stored as links, never followed)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=3) as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(blob: bytes, folder: Path) -> None:
    """Unpack what `pack` made; members that would land outside `folder` (links out of it, absolute
    paths, device files) are left out."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        tar.extractall(folder, filter=_inside)


def _inside(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None
