"""Harbor tasks (Terminal-Bench 2.0's format): the agent works in the task's own image, `tests/test.sh` scores it.

A Harbor task folder holds `instruction.md`, `task.toml` (`[agent] timeout_sec`, `[verifier]
timeout_sec`, `[environment] cpus`, `memory`/`memory_mb`, `allow_internet`), `environment/Dockerfile`,
`tests/test.sh` and optionally `solution/solve.sh`. Here:
1. the image is built from `environment/` (cached by a hash of the folder; a `FROM` must be local:
   `agentcli-sandbox:latest` is agentcli's own sandbox image);
2. the image's `WORKDIR` is copied out into a fresh git work dir, which is mounted back at that
   path for the agent (`--sandbox docker --image TASK-IMAGE`, the task's limits and network);
3. after the agent, `tests/test.sh` runs in a new container of the image, as Harbor runs it: the
   work dir at `WORKDIR`, `tests/` at `/tests`, `/logs/verifier` where it writes `reward.txt` (a
   number, possibly between 0 and 1) or `reward.json`; no capabilities, no network unless allowed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import re
import secrets
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from agentcli.eval.agents import AgentcliRunner, AgentRun, Runner, TaskError, last_line
from agentcli.eval.harbor_spec import HarborSpec
from agentcli.eval.procs import Children
from agentcli.eval.workspace import Workspace, harness_env, prepare

BASE_IMAGE = "agentcli-sandbox:latest"
IMAGE_PREFIX = "agentcli-harbor"
SOLUTION_TIMEOUT_S = 600.0


def build_image(task_dir: Path, task_id: str) -> str:
    """The task's image, built once per content of `environment/`; TaskError when it does not build."""
    import docker
    from docker.errors import BuildError, ImageNotFound

    from agentcli.sandbox.images import ensure_image

    environment = task_dir / "environment"
    digest = hashlib.sha256()
    for path in sorted(p for p in environment.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(environment)).encode() + b"\0" + path.read_bytes() + b"\0")
    tag = f"{IMAGE_PREFIX}-{re.sub(r'[^a-z0-9_.-]', '-', task_id.lower())}:{digest.hexdigest()[:12]}"
    client = docker.from_env()
    try:
        with contextlib.suppress(ImageNotFound):
            client.images.get(tag)
            return tag
        base = ensure_image().tag  # what a task's `FROM agentcli-sandbox:latest` names
        client.api.tag(base, *BASE_IMAGE.split(":"))
        try:
            client.images.build(path=str(environment), tag=tag, rm=True, forcerm=True, pull=False)
        except BuildError as e:
            lines = [str(chunk.get("stream") or chunk.get("error") or "").strip() for chunk in e.build_log]
            why = ([line for line in lines if line] or [e.msg])[-1]
            raise TaskError(f"environment/Dockerfile does not build: {why}") from None
        return tag
    finally:
        client.close()


def image_workdir(image: str) -> str:
    """The image's WORKDIR, where the agent works; TaskError when it has none of its own."""
    import docker

    client = docker.from_env()
    try:
        workdir = (client.api.inspect_image(image)["Config"].get("WorkingDir") or "").rstrip("/")
    finally:
        client.close()
    if not workdir:
        raise TaskError("environment/Dockerfile sets no WORKDIR: the agent has no folder to work in")
    return workdir


def copy_out(image: str, workdir: str, target: Path) -> None:
    """The image's `workdir`, copied into `target` (links kept as links, nothing outside it)."""
    import docker

    client = docker.from_env()
    try:
        container = client.api.create_container(image, command=["true"], network_disabled=True)
        try:
            stream, _ = client.api.get_archive(container["Id"], workdir + "/.")
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                archive.extractall(target, filter="data")
        finally:
            client.api.remove_container(container["Id"], force=True)
    finally:
        client.close()
    # The archive of `dir/.` holds `./...` entries; a top folder named like the workdir may come too.
    nested = target / Path(workdir).name
    if not any(p for p in target.iterdir() if p != nested) and nested.is_dir():
        for child in nested.iterdir():
            child.rename(target / child.name)
        nested.rmdir()


def prepare_workspace(image: str, workdir: str, root: Path) -> Workspace:
    source = root / "image-workdir"
    source.mkdir(parents=True)
    copy_out(image, workdir, source)
    return prepare(source, root / "run")


def container_run(
    children: Children,
    image: str,
    command: list[str],
    *,
    mounts: dict[Path, tuple[str, str]],
    workdir: str,
    spec: HarborSpec,
    timeout: float,
    log: Path,
):
    """Run `command` in a fresh container of `image` (removed after, also on a timeout or Ctrl-C); the
    first of `mounts` is the work dir."""
    name = f"agentcli-harbor-{secrets.token_hex(4)}"
    owner = next(iter(mounts)).stat()  # as the work dir's owner, as the agent's commands ran
    argv = ["docker", "run", "--rm", "--name", name, "--user", f"{owner.st_uid}:{owner.st_gid}", "--workdir", workdir]
    argv += ["--init"]
    argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--pids-limit", "512"]
    argv += ["--network", "bridge" if spec.allow_internet else "none"]
    argv += ["--memory", f"{spec.memory_mb or 4096}m", "--cpus", f"{spec.cpus or 2:g}"]
    for host, (inside, mode) in mounts.items():
        argv += ["-v", f"{host}:{inside}:{mode}"]
    try:
        return children.run([*argv, image, *command], cwd=log.parent, env=harness_env(), timeout=timeout, stdout=log)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)


def run_agent(
    task, spec: HarborSpec, runner: Runner, image: str, workdir: str, ws: Workspace, children: Children, out_dir: Path
) -> AgentRun:
    """The eval's agent on the task, in the task's image: agentcli with the task's limits, the
    oracle's solve.sh, or nothing."""
    if runner.name == "noop":
        return runner.run(task, ws, children, out_dir)
    if runner.name == "oracle":
        solution = task.dir / "solution"
        if not (solution / "solve.sh").is_file():
            raise TaskError("missing solution/solve.sh (needed by --oracle)")
        done = container_run(
            children,
            image,
            ["bash", "/solution/solve.sh"],
            mounts={ws.workdir: (workdir, "rw"), solution: ("/solution", "ro")},
            workdir=workdir,
            spec=spec,
            timeout=SOLUTION_TIMEOUT_S,
            log=out_dir / "solution.log",
        )
        run = AgentRun(status="finished", seconds=round(done.seconds, 3), exit_code=done.returncode)
        run.stopped = done.stopped
        if done.timed_out or done.returncode != 0:
            run.status = "timeout" if done.timed_out else "failed"
            run.reason = f"solve.sh exited {done.returncode}: {last_line(out_dir / 'solution.log')}"
        return run
    assert isinstance(runner, AgentcliRunner)
    config = dataclasses.replace(runner.config, sandbox="docker")
    config.timeout = spec.agent_timeout or config.timeout
    config.extra_args = [*config.extra_args, "--image", image]
    if spec.memory_mb:
        config.extra_args += ["--memory", str(spec.memory_mb)]
    if spec.cpus:
        config.extra_args += ["--cpus", f"{spec.cpus:g}"]
    if spec.allow_internet:
        config.extra_args += ["--network"]
    config.env = {**config.env, "AGENTCLI_CONTAINER_WORKDIR": workdir}
    return AgentcliRunner(config).run(task, ws, children, out_dir)


@dataclass
class Verdict:
    reward: float
    seconds: float
    note: str = ""


def verify(task, spec: HarborSpec, image: str, workdir: str, ws: Workspace, children: Children, out_dir: Path):
    """`tests/test.sh` in a fresh container of the image, over the work dir the agent left."""
    logs = out_dir / "verifier"
    logs.mkdir(exist_ok=True)
    logs.chmod(0o777)  # written from inside, by whichever user the container runs as
    done = container_run(
        children,
        image,
        ["bash", "/tests/test.sh"],
        mounts={ws.workdir: (workdir, "rw"), task.dir / "tests": ("/tests", "ro"), logs: ("/logs/verifier", "rw")},
        workdir=workdir,
        spec=spec,
        timeout=spec.verifier_timeout,
        log=out_dir / "verifier.log",
    )
    seconds = round(done.seconds, 3)
    if done.timed_out:
        return Verdict(0.0, seconds, f"tests/test.sh ran past {spec.verifier_timeout:g} s")
    reward = read_reward(logs)
    if reward is None:
        return Verdict(0.0, seconds, f"the verifier wrote no reward (test.sh exited {done.returncode})")
    return Verdict(reward, seconds)


def read_reward(logs: Path) -> float | None:
    """`reward.txt` (a number) or `reward.json` (`{"reward": x}`) from the verifier's logs."""
    with contextlib.suppress(OSError, ValueError):
        return float((logs / "reward.txt").read_text().strip())
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        return float(json.loads((logs / "reward.json").read_text())["reward"])
    return None
