"""Repository map speed and memory on a large real tree, beside grep and ctags over the same tree.

    python benchmarks/bench_repomap.py [TREE ...] [--tokens N] [--warm-runs N]

With no TREE, the Django 5.1 source distribution (about 500k lines of Python) is fetched with
`pip download` into a temporary directory. Each measured run is its own process, so "cold" (empty
cache) and "warm" (everything cached) each report their own peak RSS; times are of
`build_repo_map` itself, without the interpreter's start.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

CTAGS_LANGUAGES = "Python,JavaScript,TypeScript,Go,Rust,Java,C,C++,Sh"
# The grep baseline: lines that start a definition in any of the map's languages, in its files.
GREP_DEFINITIONS = r"^\s*(def|class|function|func|fn|struct|enum|trait|interface|type|impl|public|static)\b"


def _grep_includes() -> list[str]:
    from agentcli.repo.tags import EXTENSIONS

    return [f"--include=*{ext}" for ext in EXTENSIONS]


def one_run(tree: Path, tokens: int) -> None:
    """Child process: one map, printed as JSON."""
    from agentcli.repo.repomap import MapStats, build_repo_map

    stats = MapStats()
    started, cpu_started = time.perf_counter(), time.process_time()
    text = build_repo_map(tree, token_budget=tokens, stats=stats)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"seconds": seconds, "cpu": cpu, "peak_mib": peak_kib / 1024, "map_chars": len(text), **vars(stats)}
    print(json.dumps(result))


def measure(tree: Path, tokens: int, cache_dir: Path) -> dict:
    env = {**os.environ, "AGENTCLI_CACHE_DIR": str(cache_dir)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(tree), "--tokens", str(tokens)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bare_interpreter_mib() -> float:
    """Peak RSS of a process that only imports the module: what the map itself adds is above this."""
    code = "import resource, agentcli.repo.repomap; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout) / 1024


def timed(command: list[str], cwd: Path) -> float | None:
    if shutil.which(command[0]) is None:
        return None
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def ctags_flavour() -> str | None:
    if shutil.which("ctags") is None:
        return None
    out = subprocess.run(["ctags", "--version"], capture_output=True, text=True)
    return "universal" if "Universal Ctags" in out.stdout else "other"


def fetch_django(into: Path) -> Path:
    print("fetching the Django 5.1 sdist with pip ...", flush=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            "django==5.1",
            "-d",
            str(into),
        ],
        check=True,
    )
    archive = next(into.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:  # a Python without extraction filters
            tar.extractall(into)
    return next(p for p in into.iterdir() if p.is_dir())


def source_lines(tree: Path) -> tuple[int, int]:
    """Files and lines the map covers (by extension), counted the plain way."""
    from agentcli.repo.repomap import list_files
    from agentcli.repo.tags import language_for

    files = lines = 0
    for rel in list_files(tree):
        if language_for(rel):
            try:
                with open(tree / rel, "rb") as f:
                    lines += f.read().count(b"\n")
                files += 1
            except OSError:
                pass
    return files, lines


def bench(tree: Path, tokens: int, warm_runs: int) -> None:
    files, lines = source_lines(tree)
    print(f"\ntree: {tree}  ({files} source files, {lines:,} lines; listing by {listing_kind(tree)})")
    with tempfile.TemporaryDirectory(prefix="bench-repomap-cache-") as cache:
        cold = measure(tree, tokens, Path(cache))
        warm = [measure(tree, tokens, Path(cache)) for _ in range(warm_runs)]
    warm_s = statistics.median(w["seconds"] for w in warm)
    warm_cpu = statistics.median(w["cpu"] for w in warm)
    warm_mib = max(w["peak_mib"] for w in warm)
    base_mib = bare_interpreter_mib()
    rate = cold["lines_parsed"] / cold["seconds"]
    print(
        f"map cold : {cold['seconds']:6.2f} s (cpu {cold['cpu']:.2f} s)  peak RSS {cold['peak_mib']:6.1f} MiB  "
        f"parsed {cold['parsed']} files, {cold['lines_parsed']:,} lines ({rate:,.0f} lines/s), "
        f"skipped {cold['skipped']}, {cold['definitions']:,} definitions"
    )
    print(
        f"map warm : {warm_s:6.2f} s (cpu {warm_cpu:.2f} s)  peak RSS {warm_mib:6.1f} MiB  "
        f"(median of {warm_runs}; parsed {warm[-1]['parsed']}, cached {warm[-1]['cached']})"
    )
    print(f"import only: peak RSS {base_mib:.1f} MiB; map output {cold['map_chars']} chars for a {tokens}-token budget")

    grep = timed(["grep", "-rnE", *_grep_includes(), GREP_DEFINITIONS, "."], tree)
    flavour = ctags_flavour()
    ctags = None
    if flavour == "universal":
        ctags = timed(["ctags", "-R", "-f", "-", f"--languages={CTAGS_LANGUAGES}", "."], tree)
    for name, seconds in (("grep -rnE definition lines", grep), ("ctags -R (universal)", ctags)):
        if seconds is None:
            print(f"{name:26}: not available")
            continue
        print(
            f"{name:26}: {seconds:6.2f} s   map cold / this = {cold['seconds'] / seconds:5.1f}x   "
            f"map warm / this = {warm_s / seconds:5.2f}x"
        )


def listing_kind(tree: Path) -> str:
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=tree, capture_output=True, text=True)
    return "git ls-files" if inside.returncode == 0 else "directory walk"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path, help="Trees to map (default: fetch the Django sdist).")
    parser.add_argument("--tokens", type=int, default=1024, help="Map token budget.")
    parser.add_argument("--warm-runs", type=int, default=3, help="Warm runs to take the median of.")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        one_run(args.child, args.tokens)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if args.trees:
        for tree in args.trees:
            bench(tree.resolve(), args.tokens, args.warm_runs)
        return
    with tempfile.TemporaryDirectory(prefix="bench-repomap-src-") as tmp:
        bench(fetch_django(Path(tmp)), args.tokens, args.warm_runs)


if __name__ == "__main__":
    main()
