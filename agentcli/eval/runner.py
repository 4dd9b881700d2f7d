"""One rollout end to end: fresh work dir, the agent, the tests, the score, the trajectory."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path

from agentcli.eval.agents import AgentRun, Runner, TaskError
from agentcli.eval.procs import Children, Stopping
from agentcli.eval.results import TaskResult
from agentcli.eval.rollouts import Rollout
from agentcli.eval.scoring import TEST_TIMEOUT_S, run_tests
from agentcli.eval.tasks import Task
from agentcli.eval.workspace import changes_patch, install_tests, prepare


def run_task(
    rollout: Rollout | Task,
    runner: Runner,
    children: Children,
    trajectories: Path,
    test_timeout: float = TEST_TIMEOUT_S,
    scratch: Path | None = None,
) -> tuple[TaskResult, AgentRun | None]:
    """Run and score one rollout; its records go to `trajectories/<task id>/` (`.../sample-<i>/` in
    a group), its work dir under `scratch` (default: the system's temporary folder).

    Raises `Stopping` when the eval is interrupted meanwhile: a half-run task has no result.
    """
    started = time.monotonic()
    rollout = rollout if isinstance(rollout, Rollout) else Rollout(rollout)
    task = rollout.task
    if rollout.seed is not None:
        runner = type(runner)(dataclasses.replace(runner.config, seed=rollout.seed))
    out_dir = trajectories / rollout.record_path
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    result = TaskResult(task=task.id, status="error", difficulty=task.difficulty, category=task.category)
    result.sample, result.seed = rollout.sample, rollout.seed
    result.trajectory = str(out_dir)
    if task.problem:
        result.reason = f"malformed task: {task.problem}"
        return _finish(result, out_dir, started), None
    tmp = Path(tempfile.mkdtemp(prefix=f"agentcli-eval-{task.id}-", dir=scratch))
    agent: AgentRun | None = None
    try:
        if task.harbor is not None:
            agent = _run_harbor(task, runner, children, out_dir, tmp, result)
        else:
            ws = prepare(task.repo, tmp)
            agent = runner.run(task, ws, children, out_dir)
            if agent.stopped:
                raise Stopping()
            _record_agent(result, agent)
            install_tests(task.tests, ws)
            tests = run_tests(children, ws.workdir, ws.tests, out_dir, test_timeout)
            if children.stopping.is_set():
                raise Stopping()
            (out_dir / "changes.patch").write_text(changes_patch(ws))
            result.reward, result.tests_passed, result.tests_total = tests.reward, tests.passed, tests.total
            result.test_share, result.test_seconds = tests.share, tests.seconds
            result.test_exit_code = None if tests.timed_out else tests.returncode
            result.status = "passed" if tests.reward else "failed"
            _add_reason(result, tests.note)
    except Stopping:
        raise
    except TaskError as e:
        result.reason = str(e)
    except Exception as e:  # a failed copy or git call while preparing, for instance: this task only
        result.reason = f"harness: {type(e).__name__}: {e}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _finish(result, out_dir, started), agent


def _run_harbor(task: Task, runner: Runner, children: Children, out_dir: Path, tmp: Path, result: TaskResult):
    """A task in its own image (Harbor's layout or the older Terminal-Bench one): its image, the agent
    in it, its verifier's reward (which may lie between 0 and 1)."""
    from agentcli.eval import harbor

    assert task.harbor is not None
    image = harbor.build_image(task.dir, task.id, task.harbor.environment)
    workdir = harbor.image_workdir(image)
    ws = harbor.prepare_workspace(image, workdir, tmp)
    agent = harbor.run_agent(task, task.harbor, runner, image, workdir, ws, children, out_dir)
    if agent.stopped:
        raise Stopping()
    _record_agent(result, agent)
    verdict = harbor.verify(task, task.harbor, image, workdir, ws, children, out_dir)
    if children.stopping.is_set():
        raise Stopping()
    (out_dir / "changes.patch").write_text(changes_patch(ws))
    result.reward, result.test_seconds, result.test_exit_code = verdict.reward, verdict.seconds, verdict.exit_code
    result.tests_passed, result.tests_total = verdict.passed, verdict.total
    result.test_share = verdict.passed / verdict.total if verdict.total else verdict.reward
    result.status = "passed" if verdict.reward >= 1 else "failed"
    _add_reason(result, verdict.note)
    return agent


def _add_reason(result: TaskResult, note: str) -> None:
    if note:
        result.reason = f"{note}; {result.reason}" if result.reason else note


def _record_agent(result: TaskResult, agent: AgentRun) -> None:
    result.agent_status, result.reason = agent.status, agent.reason
    result.steps, result.tokens_in, result.tokens_out = agent.steps, agent.tokens_in, agent.tokens_out
    result.cost, result.agent_seconds, result.agent_exit_code = agent.cost, agent.seconds, agent.exit_code


def _finish(result: TaskResult, out_dir: Path, started: float) -> TaskResult:
    result.wall_seconds = round(time.monotonic() - started, 3)
    (out_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return result
