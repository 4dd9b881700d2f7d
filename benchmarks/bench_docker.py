"""The Docker sandbox beside what exec-per-command agents pay: round trip of a trivial command, and start.

Run: python benchmarks/bench_docker.py [--runs N] [--starts N] [--image NAME]
Prints medians (and p90) of:
  - agentcli's persistent shell in the container (one `docker exec` per session, commands over its socket);
  - `docker exec CONTAINER true` per command (the CLI, as most agents call it) and the SDK's exec_run;
  - `docker run --rm IMAGE true` per command;
  - container start to the first command's result (create, start, exec the shell, bootstrap, `true`).
Targets: round trip <= 5 ms median and >= 20x faster than `docker exec`; start <= 1.5 s.
Warm pool: not implemented; a session's container starts in well under the start target here.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentcli.sandbox.containers import MANAGED, owner_labels, remove_container
from agentcli.sandbox.docker import DockerSandbox
from agentcli.sandbox.images import docker_client, image_tag


def timed(call: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return times


def row(name: str, times: list[float], base: float | None = None, unit: str = "ms") -> None:
    scale = 1000 if unit == "ms" else 1
    median = statistics.median(times)
    p90 = sorted(times)[max(0, int(len(times) * 0.9) - 1)]
    ratio = f"{base / median:>9.1f}x" if base else ""
    print(f"{name:<52}{median * scale:>10.2f}{p90 * scale:>10.2f} {unit}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="round trips per method (docker run: a tenth)")
    parser.add_argument("--starts", type=int, default=5, help="container starts to time")
    parser.add_argument("--image", default="", help="image to use (default: agentcli's sandbox image)")
    args = parser.parse_args()
    client = docker_client()
    api = client.api
    image = args.image or image_tag()
    try:
        api.inspect_image(image)
    except Exception:
        sys.exit(f"image {image} is missing: run `agentcli sandbox build` first")
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-docker-")) / "repo"
    work.mkdir()

    # Container start to the first command's result, as `solve` pays it (the image exists).
    starts = []
    for i in range(args.starts):
        box = DockerSandbox(work, work.parent / "state" / "sessions" / f"bench-{i}" / "commands", image=args.image)
        started = time.perf_counter()
        box.start()
        box.run("true")
        starts.append(time.perf_counter() - started)
        box.close()

    box = DockerSandbox(work, work.parent / "state" / "sessions" / "bench" / "commands", image=args.image)
    box.start()
    try:
        for _ in range(20):
            box.run("true")
        shell = timed(lambda: box.run("true", timeout=30), args.runs)
        container = box.container_id
        assert container is not None
        cli_exec = timed(
            lambda: subprocess.run(["docker", "exec", container, "true"], check=True), max(10, args.runs // 4)
        )
        sdk_exec = timed(lambda: api.exec_start(api.exec_create(container, ["true"])["Id"]), max(10, args.runs // 4))
    finally:
        box.close()

    labels = [f"--label={k}={v}" for k, v in {**owner_labels("bench-run"), MANAGED: "1"}.items()]
    run_argv = ["docker", "run", "--rm", "--network", "none", *labels, image, "true"]
    docker_run = timed(lambda: subprocess.run(run_argv, check=True, capture_output=True), max(5, args.runs // 10))

    base = statistics.median(cli_exec)
    print(f"trivial command round trip (`true`); ratio = docker exec CLI median / this median; image {image}")
    print(f"{'how':<52}{'median':>10}{'p90':>10}")
    row("agentcli persistent shell in the container", shell, base)
    row("docker exec per command (CLI)", cli_exec, base)
    row("docker exec per command (SDK exec_create+start)", sdk_exec, base)
    row("docker run --rm per command (CLI)", docker_run, base)
    print()
    row("container start to first command result", starts, unit="s")
    print("(the persistent shell also keeps cwd, variables and venvs between commands; exec and run keep nothing)")
    for leftover in api.containers(all=True, filters={"label": "org.agentcli.session=bench-run"}):
        remove_container(api, leftover["Id"])
    client.close()


if __name__ == "__main__":
    main()
