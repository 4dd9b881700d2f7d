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
import shutil
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


def build_image(task_dir: Path, task_id: str, context: str = "environment") -> str:
    """The task's image, built once per content of its build context (`environment/`, or the task
    folder in the older layout); TaskError when it does not build."""
    import docker
    from docker.errors import BuildError, ImageNotFound

    from agentcli.sandbox.images import ensure_image

    environment = (task_dir / context).resolve()
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
            dockerfile = "Dockerfile" if context == "." else f"{context}/Dockerfile"
            raise TaskError(f"{dockerfile} does not build: {why}") from None
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
        raise TaskError("the task's Dockerfile sets no WORKDIR: the agent has no folder to work in")
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
    env: dict[str, str] | None = None,
):
    """Run `command` in a fresh container of `image` (removed after, also on a timeout or Ctrl-C); the
    first of `mounts` is the work dir; `env`: variables set inside."""
    name = f"agentcli-harbor-{secrets.token_hex(4)}"
    owner = next(iter(mounts)).stat()  # as the work dir's owner, as the agent's commands ran
    argv = ["docker", "run", "--rm", "--name", name, "--user", f"{owner.st_uid}:{owner.st_gid}", "--workdir", workdir]
    argv += ["--init"]
    argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--pids-limit", "512"]
    argv += ["--network", "bridge" if spec.allow_internet else "none"]
    argv += ["--memory", f"{spec.memory_mb or 4096}m", "--cpus", f"{spec.cpus or 2:g}"]
    for host, (inside, mode) in mounts.items():
        argv += ["-v", f"{host}:{inside}:{mode}"]
    for name_, value in (env or {}).items():
        argv += ["-e", f"{name_}={value}"]
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
        solution = task.dir / spec.solution
        if not solution.is_file():
            raise TaskError(f"missing {spec.solution} (needed by --oracle)")
        # Harbor's solve.sh may use the files beside it in solution/; the older layout's stands alone.
        mount = (solution.parent, "/solution") if spec.layout == "harbor" else (solution, "/solution/solve.sh")
        done = container_run(
            children,
            image,
            ["bash", "/solution/solve.sh"],
            mounts={ws.workdir: (workdir, "rw"), mount[0]: (mount[1], "ro")},
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
    passed: int = 0  # tests, where the verifier lists them
    total: int = 0
    exit_code: int | None = None  # the verifier's; None when it ran past its time


def verify(task, spec: HarborSpec, image: str, workdir: str, ws: Workspace, children: Children, out_dir: Path):
    """The task's tests in a fresh container of the image, over the work dir the agent left: Harbor's
    `tests/test.sh`, or the older layout's `run-tests.sh` with `tests/` beside it at `$TEST_DIR`."""
    logs = out_dir / "verifier"
    logs.mkdir(exist_ok=True)
    logs.chmod(0o777)  # written from inside, by whichever user the container runs as
    script = "test.sh" if spec.layout == "harbor" else "run-tests.sh"
    tests = task.dir / "tests"
    if spec.layout != "harbor":  # tests/ and run-tests.sh together, as Terminal-Bench copied them
        tests = ws.root / "verifier-tests"  # beside the work dir, removed with it
        shutil.rmtree(tests, ignore_errors=True)
        if (task.dir / "tests").is_dir():
            shutil.copytree(task.dir / "tests", tests, symlinks=True)
        tests.mkdir(exist_ok=True)
        (tests / script).unlink(missing_ok=True)  # a link of that name is replaced, never written through
        shutil.copyfile(task.dir / "run-tests.sh", tests / script)
        for path in (tests, *tests.rglob("*")):  # readable by the container's user; links left alone
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o644))
    done = container_run(
        children,
        image,
        ["bash", f"/tests/{script}"],
        mounts={ws.workdir: (workdir, "rw"), tests: ("/tests", "ro"), logs: ("/logs/verifier", "rw")},
        workdir=workdir,
        spec=spec,
        timeout=spec.verifier_timeout,
        log=out_dir / "verifier.log",
        env={"TEST_DIR": "/tests"},
    )
    seconds = round(done.seconds, 3)
    if done.timed_out:
        return Verdict(0.0, seconds, f"{script} ran past {spec.verifier_timeout:g} s")
    if spec.layout != "harbor":
        verdict = pytest_verdict(out_dir / "verifier.log", done.returncode, seconds)
    elif (reward := read_reward(logs)) is None:
        verdict = Verdict(0.0, seconds, f"the verifier wrote no reward (test.sh exited {done.returncode})")
    else:
        verdict = Verdict(reward, seconds)
    verdict.exit_code = done.returncode
    return verdict


_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED)\s+\S", re.MULTILINE)
_SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+$", re.MULTILINE)


def pytest_verdict(log: Path, returncode: int, seconds: float) -> Verdict:
    """The older layout's score, as Terminal-Bench's pytest parser gave it: 1 when every test in the
    last `short test summary info` of pytest's `-rA` passed (failures and errors count against);
    without such a summary, the exit status decides."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    headers = list(_SUMMARY_HEADER.finditer(text))
    # Only pytest's own summary counts: captured logs above it (`ERROR    root:...`) are not outcomes.
    outcomes = _SUMMARY.findall(text[headers[-1].end() :]) if headers else []
    passed = sum(1 for o in outcomes if o in ("PASSED", "XFAIL"))
    failed = sum(1 for o in outcomes if o in ("FAILED", "ERROR", "XPASS"))
    if passed + failed == 0:
        ok = returncode == 0
        return Verdict(float(ok), seconds, "" if ok else f"run-tests.sh exited {returncode} and listed no test")
    reward = 1.0 if failed == 0 else 0.0
    return Verdict(
        reward, seconds, "" if reward else f"{failed} of {passed + failed} tests failed", passed, passed + failed
    )


def read_reward(logs: Path) -> float | None:
    """`reward.txt` (a number) or `reward.json` (`{"reward": x}`) from the verifier's logs."""
    with contextlib.suppress(OSError, ValueError):
        return float((logs / "reward.txt").read_text().strip())
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        return float(json.loads((logs / "reward.json").read_text())["reward"])
    return None
