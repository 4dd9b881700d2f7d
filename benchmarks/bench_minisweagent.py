"""Side by side: the same task suite with mini-swe-agent 2.4.6 and with agentcli, on the same local model.

mini-swe-agent is installed from PyPI into its own virtual environment (nothing of it enters the
project). It drives the GGUF that agentcli embeds (`local/qwen2.5-coder-1.5b` by default),
served by `python -m llama_cpp.server` with the same context size, thread count, temperature and
reply length as agentcli's in-process backend. Each task gets the same fresh work dir, the same
wall clock (`--timeout`, plus the harness's kill grace), the same step limit, and is scored by the
same harness as `agentcli eval` (the task's tests, run afterwards from outside the work dir).

  python3 benchmarks/bench_minisweagent.py                        # mini-swe-agent on the whole suite
  python3 benchmarks/bench_minisweagent.py --with-agentcli        # and agentcli, then both tables
  python3 benchmarks/bench_minisweagent.py --tasks fix-off-by-one --timeout 120   # a smoke run

It runs unattended (stdin is never read), keeps results after every task (`--resume` continues an
interrupted run) and prints a table per agent plus a side-by-side one. Exit status 0 when every
task ran, whatever the rewards.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from agentcli import paths  # noqa: E402
from agentcli.eval import results as res  # noqa: E402
from agentcli.eval.agents import KILL_GRACE_S, AgentRun, RunConfig  # noqa: E402
from agentcli.eval.procs import Children  # noqa: E402
from agentcli.eval.rollouts import plan  # noqa: E402
from agentcli.eval.suite import run_suite  # noqa: E402
from agentcli.eval.table import print_results, progress_line  # noqa: E402
from agentcli.eval.tasks import Task, load_suite, split_ids  # noqa: E402
from agentcli.eval.workspace import Workspace, harness_env  # noqa: E402

MINI_VERSION = "2.4.6"
SUITE = ROOT / "benchmarks" / "tasks"
ALIAS = "local-model"  # the name the server answers to; mini-swe-agent calls it openai/local-model


def log(message: str) -> None:
    print(f"bench: {message}", flush=True)


# ---------------------------------------------------------------- environments


def ensure_venv(path: Path, packages: list[str], *, system_site: bool = False) -> Path:
    """A virtual environment at `path` with `packages` installed; returns its python."""
    python = path / "bin" / "python"
    stamp = path / ".bench-packages"
    wanted = "\n".join(packages)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    log(f"installing {', '.join(packages)} into {path}")
    args = [sys.executable, "-m", "venv", "--clear", str(path)]
    subprocess.run(args + (["--system-site-packages"] if system_site else []), check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages], check=True)
    stamp.write_text(wanted)
    return python


def server_python(bench_dir: Path) -> Path:
    """A python that can run llama_cpp.server.

    It sees the project's llama-cpp-python (compiling it again takes minutes) through
    --system-site-packages; the server's own dependencies go into the bench venv only.
    """
    try:
        requires = importlib.metadata.requires("llama_cpp_python") or []
        version = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        log("llama-cpp-python is not installed here: installing it into the server venv (compiles, ~8 min)")
        return ensure_venv(bench_dir / "llama-server", ["llama-cpp-python[server]==0.3.36"])
    extras = [r.split(";")[0].strip() for r in requires if re.search(r"""extra\s*==\s*["']server["']""", r)]
    log(f"llama-cpp-python {version} found; server extras: {', '.join(extras)}")
    return ensure_venv(bench_dir / "llama-server", extras, system_site=True)


def model_path(name: str) -> Path:
    """The GGUF agentcli uses for `name`, pulled (verified) if it is not here yet."""
    from agentcli.models import store

    path = store.resolve(name).path
    if not path.is_file():
        log(f"{name} is not here yet: agentcli models pull {name}")
        subprocess.run([sys.executable, "-m", "agentcli", "models", "pull", name], check=True)
    return path


def llama_threads() -> int:
    """The thread count agentcli's in-process backend uses (physical cores)."""
    from agentcli.models.llamacpp import physical_cores

    return physical_cores()


class Server:
    """`python -m llama_cpp.server` on 127.0.0.1, stopped on exit."""

    def __init__(self, python: Path, gguf: Path, port: int, n_ctx: int, threads: int, log_path: Path):
        self.argv = [
            str(python), "-m", "llama_cpp.server",
            "--model", str(gguf), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
        ]  # fmt: skip
        self.url = f"http://127.0.0.1:{port}/v1"
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        log(f"starting llama_cpp.server at {self.url} (log: {self.log_path})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"bench: llama_cpp.server exited {self.proc.returncode}; see {self.log_path}")
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.__exit__()
        raise SystemExit(f"bench: llama_cpp.server did not answer in 180 s; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            from agentcli.eval.procs import stop_group

            stop_group(self.proc, grace=10)


# ---------------------------------------------------------------- mini-swe-agent as an eval runner


class MiniSweAgentRunner:
    """`mini` headless (yolo, exits when the model submits), text actions, the local server as its model."""

    name = "mini-swe-agent"

    def __init__(self, mini: Path, config: RunConfig, server_url: str, home: Path, command_timeout: int, reply: int):
        self.mini, self.config, self.server_url = mini, config, server_url
        self.home, self.command_timeout, self.reply_tokens = home, command_timeout, reply

    def argv(self, task: Task, ws: Workspace, trajectory: Path) -> list[str]:
        c = self.config
        settings = {
            "model.model_kwargs.api_base": self.server_url,
            "model.model_kwargs.api_key": "none",
            "model.model_kwargs.temperature": 0.0,
            "model.model_kwargs.max_tokens": self.reply_tokens,
            "model.cost_tracking": "ignore_errors",
            "agent.step_limit": c.max_steps or 0,
            "agent.wall_time_limit_seconds": int(c.timeout),
            "environment.cwd": str(ws.workdir),
            "environment.timeout": self.command_timeout,
        }
        argv = [str(self.mini), "--yolo", "--exit-immediately", "--cost-limit", "0", "--task", task.instruction]
        argv += ["--model", f"openai/{ALIAS}", "--model-class", "litellm_textbased", "-c", "mini_textbased.yaml"]
        for key, value in settings.items():
            argv += ["-c", f"{key}={json.dumps(value) if not isinstance(value, str) else value}"]
        return [*argv, "--output", str(trajectory)]

    def run(self, task: Task, ws: Workspace, children: Children, out_dir: Path) -> AgentRun:
        trajectory = out_dir / "mini.traj.json"
        env = harness_env(
            MSWEA_CONFIGURED="true",  # no first-run setup prompt
            MSWEA_SILENT_STARTUP="1",
            MSWEA_GLOBAL_CONFIG_DIR=str(self.home),
            LITELLM_LOCAL_MODEL_COST_MAP="True",  # offline: no cost-map download
        )
        done = children.run(
            self.argv(task, ws, trajectory),
            cwd=ws.workdir,
            env=env,
            timeout=self.config.timeout + KILL_GRACE_S,
            stdout=out_dir / "agent.log",
        )
        run = AgentRun(status="error", seconds=round(done.seconds, 3), exit_code=done.returncode, stopped=done.stopped)
        read_trajectory(trajectory, run)
        if done.timed_out:
            run.status, run.reason = "timeout", f"stopped by the harness after {done.seconds:.0f} s"
        elif run.status == "error" and not run.reason:
            run.reason = f"mini exited {done.returncode}: {_last_line(out_dir / 'agent.log')}"
        return run


def read_trajectory(path: Path, run: AgentRun) -> None:
    """Steps, tokens and how it ended, from mini-swe-agent's trajectory file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return
    info = data.get("info", {})
    run.steps = int(info.get("model_stats", {}).get("api_calls", 0))
    for message in data.get("messages", []):
        response = (message.get("extra") or {}).get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            run.tokens_in += int(usage.get("prompt_tokens") or 0)
            run.tokens_out += int(usage.get("completion_tokens") or 0)
    status = str(info.get("exit_status", ""))
    if status == "Submitted":
        run.status, run.reason = "finished", "submitted"
    elif status in ("LimitsExceeded", "TimeExceeded", "RepeatedFormatError"):
        limit = {"LimitsExceeded": "step limit reached", "TimeExceeded": "time limit reached"}
        run.status, run.reason = "failed", limit.get(status, "repeated format errors")
    elif status:
        last = data.get("messages", [{}])[-1].get("extra", {}) if data.get("messages") else {}
        run.status, run.reason = "error", f"{status}: {str(last.get('exception_str', ''))[:200]}"


def _last_line(path: Path) -> str:
    try:
        lines = [x.strip() for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


# ---------------------------------------------------------------- running and reporting


def run_mini(args: argparse.Namespace, tasks: list[Task], runner: MiniSweAgentRunner) -> list[res.TaskResult]:
    out = Path(args.out)
    info = res.RunInfo(
        agent=runner.name,
        model=args.model,
        suite=str(Path(args.suite).resolve()),
        sandbox="host",
        timeout=args.timeout,
        max_steps=args.max_steps,
        workers=args.workers,
        trajectories=str(out.parent / f"{out.stem}-trajectories"),
    )
    done = res.load_done(out, info) if args.resume else []
    collected = [r for r in done if r.task in {t.id for t in tasks}]
    todo = [t for t in tasks if t.id not in {r.task for r in collected}]
    log(f"mini-swe-agent {MINI_VERSION}: {len(todo)} tasks to run, {len(collected)} already scored in {out}")

    def on_result(result: res.TaskResult) -> None:
        collected.append(result)
        print(progress_line(len(collected), len(tasks), result), flush=True)
        res.write(out, info, collected, interrupted=True)

    run = run_suite(plan(todo), runner, Path(info.trajectories), workers=args.workers, on_result=on_result)
    res.write(out, info, collected, interrupted=run.interrupted)
    if run.interrupted:
        raise SystemExit(130)
    return collected


def run_agentcli(args: argparse.Namespace) -> list[res.TaskResult]:
    """`agentcli eval` with the same tasks, model, timeout and step limit."""
    argv = [sys.executable, "-m", "agentcli", "eval", args.suite, "--model", args.model]
    argv += ["--timeout", f"{args.timeout:g}", "--max-steps", str(args.max_steps), "--workers", str(args.workers)]
    argv += ["--out", args.agentcli_out, "--resume"]
    if args.tasks:
        argv += ["--tasks", ",".join(args.tasks)]
    if args.sandbox:
        argv += ["--sandbox", args.sandbox]
    log("agentcli: " + " ".join(argv[1:]))
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SystemExit(f"bench: agentcli eval exited {proc.returncode}")
    data = json.loads(Path(args.agentcli_out).read_text())
    return [res.TaskResult.from_dict(t) for t in data["tasks"]]


def side_by_side(agentcli: list[res.TaskResult], mini: list[res.TaskResult]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="agentcli vs mini-swe-agent (reward / steps / tokens / seconds)", box=None, header_style="bold")
    for name in ("task", "agentcli", "mini-swe-agent"):
        table.add_column(name, no_wrap=True)
    a, m = {r.task: r for r in agentcli}, {r.task: r for r in mini}

    def cell(r: res.TaskResult | None) -> str:
        if r is None:
            return "-"
        return f"{r.reward}  {r.steps:>3}  {r.tokens:>6}  {r.agent_seconds:>6.1f}  {r.agent_status or r.status}"

    for task in sorted(set(a) | set(m)):
        table.add_row(task, cell(a.get(task)), cell(m.get(task)))
    console = Console(highlight=False, width=160)
    console.print(table)
    for label, rows in (("agentcli", agentcli), ("mini-swe-agent", mini)):
        solved = sum(r.reward for r in rows)
        console.print(f"{label}: solved {solved}/{len(rows)}", markup=False)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default=str(SUITE))
    p.add_argument("--tasks", action="append", help="task ids, comma-separated or repeated (default: all)")
    p.add_argument("--timeout", type=float, default=300.0, help="wall-clock seconds per task (both agents)")
    p.add_argument("--max-steps", type=int, default=40, help="model calls per task (both agents)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--model", default="local/qwen2.5-coder-1.5b", help="an agentcli local/ model name")
    p.add_argument("--n-ctx", type=int, default=None, help="context size (default: agentcli's n_ctx setting)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--server", default="", help="use this OpenAI-compatible base URL instead of starting one")
    p.add_argument("--bench-dir", default=str(paths.cache_dir() / "bench"), help="where the venvs live")
    p.add_argument("--out", default=".agentcli/bench/mini-swe-agent.json")
    p.add_argument("--with-agentcli", action="store_true", help="also run agentcli eval and compare")
    p.add_argument("--agentcli-out", default=".agentcli/bench/agentcli.json")
    p.add_argument("--sandbox", default="", help="agentcli's sandbox (default: its own choice)")
    p.add_argument("--resume", action="store_true", help="skip tasks already scored in --out")
    p.add_argument("--setup-only", action="store_true", help="install the venvs and exit")
    args = p.parse_args(argv)
    args.tasks = split_ids(args.tasks)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from agentcli.config import Settings, load_settings

    settings = load_settings(None)
    n_ctx = args.n_ctx or settings.n_ctx
    bench_dir = Path(args.bench_dir)
    mini_python = ensure_venv(bench_dir / f"mini-swe-agent-{MINI_VERSION}", [f"mini-swe-agent=={MINI_VERSION}"])
    mini = mini_python.parent / "mini"
    server_py = server_python(bench_dir)
    if args.setup_only:
        log(f"ready: {mini}, {server_py}")
        return 0
    tasks = load_suite(Path(args.suite), args.tasks or None)
    agentcli_rows = run_agentcli(args) if args.with_agentcli else []

    gguf, threads = (Path(), 0) if args.server else (model_path(args.model), llama_threads())
    if not args.server:
        log(f"model {gguf.name}, n_ctx {n_ctx}, {threads} threads, reply {settings.reply_tokens} tokens, temperature 0")
    config = RunConfig(timeout=args.timeout, model=args.model, max_steps=args.max_steps)
    home = bench_dir / "mini-config"
    home.mkdir(parents=True, exist_ok=True)
    server_log = Path(args.out).parent / "llama-server.log"
    with contextlib.ExitStack() as stack:
        url = args.server or stack.enter_context(Server(server_py, gguf, args.port, n_ctx, threads, server_log)).url
        runner = MiniSweAgentRunner(mini, config, url, home, int(Settings().command_timeout), settings.reply_tokens)
        mini_rows = run_mini(args, tasks, runner)

    from rich.console import Console

    print_results(
        Console(highlight=False, width=160), mini_rows, title=f"mini-swe-agent {MINI_VERSION} on {args.model}"
    )
    if agentcli_rows:
        side_by_side(agentcli_rows, mini_rows)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.exit(main())
