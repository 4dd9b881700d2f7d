"""Resume under fire: one run SIGKILLed at random moments N times in a row, resumed after each kill,
then checked against the same run left alone: the same files, the same prompts to the model.

Run: python benchmarks/bench_resume.py [--kills 20] [--sandbox host] [--model scripted|local/qwen2.5-coder-1.5b]
With `scripted` (the default) the run is five steps whose commands append to a file, sleep, `cd` and
`export`; with a local model it is "fix the failing test" in a small repository, at temperature 0.
Prints how many kills landed, whether the end state and the prompts match, the time a resume takes
before the model is asked again, and, for a local model, how much of the first resumed prompt
llama.cpp found already evaluated (a fresh process: none is expected; the prompt is prefix-identical,
so a server with a prompt cache would find all of it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from agentcli.session.journal import read_events, sessions_dir  # noqa: E402
from agentcli.session.replay import prompts, standing  # noqa: E402

SCRIPT = [
    "PLAN:\n1. Start the log.\n2. Add to it.\n3. Greet.\n\n"
    "```bash\nmkdir -p sub && cd sub && export GREETING=hello && sleep 1 && echo one >> ../log.txt\n```",
    "```bash\nsleep 1.5; echo two >> ../log.txt\n```",
    '```bash\nsleep 1; echo "$GREETING from $(basename "$PWD")" > greeting.txt\n```',
    "```bash\ncat greeting.txt ../log.txt\n```",
    "DONE: the log has two lines and sub/greeting.txt greets.",
]
SCRIPTED_TASK = "Start log.txt with a line, add a second line, then write a greeting into sub/greeting.txt."
MODEL_TASK = "Fix the failing test."


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(root: Path, scripted: bool) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    if scripted:
        (repo / "README.md").write_text("notes\n")
    else:
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "add", ".")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init")
    return repo


def start(repo: Path, args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args, "--json", "--ci"],
        cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def finish(proc: subprocess.Popen) -> list[dict]:
    out, _ = proc.communicate()
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def journal(repo: Path) -> list[dict]:
    newest = max(sessions_dir(repo).glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
    return read_events(newest)


def state(repo: Path) -> dict[str, str]:
    return {
        str(p.relative_to(repo)): p.read_text(errors="replace")
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    }


def comparable(events: list[dict], repo: Path) -> list[list[dict]]:
    """The prompts of the trajectory that stands, durations and the repository's path left out."""

    def plain(text: str) -> str:
        return re.sub(r" · [0-9.]+ ?m?s\]", "]", text.replace(str(repo), "<repo>"))

    return [[{**m, "content": plain(m["content"])} for m in p.messages] for p in prompts(standing(events))]


def first_difference(expected: list[list[dict]], got: list[list[dict]]) -> str:
    """Where two runs' prompts first part, in a line or two."""
    for i, (a, b) in enumerate(zip(expected, got, strict=False)):
        for j, (m, n) in enumerate(zip(a, b, strict=False)):
            if m != n:
                shown = f"  expected {m['content'][-300:]!r}\n  got      {n['content'][-300:]!r}"
                return f"prompt {i + 1}, message {j + 1}:\n{shown}"
        if len(a) != len(b):
            return f"prompt {i + 1}: {len(a)} messages expected, {len(b)} got"
    return f"{len(expected)} prompts expected, {len(got)} got"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--sandbox", default="host")
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scripted = args.model == "scripted"
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-resume-"))
    os.environ["AGENTCLI_STATE_DIR"] = str(work / "state")  # read here too, to find the journals
    env = {**os.environ, "AGENTCLI_CONFIG_DIR": str(work / "cfg")}
    env["AGENTCLI_CACHE"] = "0"
    try:
        model = args.model
        if scripted:
            (work / "script.json").write_text(json.dumps(SCRIPT))
            model = f"scripted:{work / 'script.json'}"
        task = SCRIPTED_TASK if scripted else MODEL_TASK
        solve = ["solve", task, "--model", model, "--sandbox", args.sandbox]

        alone = make_repo(work / "alone", scripted)
        began = time.monotonic()
        result = finish(start(alone, solve, env))[-1]
        uninterrupted = time.monotonic() - began
        expected_state, expected_prompts = state(alone), comparable(journal(alone), alone)

        fired = make_repo(work / "fired", scripted)
        kills = resumes = restarts = 0
        fired_began = time.monotonic()
        proc = start(fired, solve, env)
        while True:
            if kills < args.kills:
                try:
                    proc.wait(timeout=rng.uniform(0.8, max(1.5, uninterrupted / 2)))
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    kills += 1
                    proc, resumes = start(fired, ["resume"], env), resumes + 1
                    continue
            events = finish(proc)
            if events and events[-1].get("type") == "result":
                break
            if proc.returncode == 2:  # killed before its first step: there was nothing to resume
                git(fired, "clean", "-fdxq")
                proc, restarts = start(fired, solve, env), restarts + 1
            else:
                proc, resumes = start(fired, ["resume"], env), resumes + 1
        trajectory = journal(fired)
        same_state = state(fired) == expected_state
        if not same_state:
            print(f"end state: expected {expected_state}\n           got      {state(fired)}")
        got = comparable(trajectory, fired)
        same_prompts = got == expected_prompts
        if not same_prompts:
            print(first_difference(expected_prompts, got))
        hits = []
        after_resume = False
        for event in trajectory:
            if event.get("type") == "run_resumed":
                after_resume = True
            elif after_resume and event.get("type") == "model_replied":
                tokens = int(event.get("prompt_tokens") or 0)
                evaluated = event.get("prompt_evaluated")
                if tokens and evaluated is not None:
                    hits.append(1 - int(evaluated) / tokens)
                after_resume = False
        print(
            f"model {args.model}, sandbox {args.sandbox}; uninterrupted: {uninterrupted:.1f} s, {result['steps']} steps"
        )
        print(f"the fired run: {time.monotonic() - fired_began:.1f} s in all")
        goes = sum(e["type"] == "run_resumed" for e in trajectory)
        print(f"kills {kills}, resumes started {resumes} ({goes} got as far as going on), fresh starts {restarts}")
        print(f"end state matches the uninterrupted run: {same_state}; prompts match: {same_prompts}")
        print(f"final status: {events[-1].get('status')}, steps {events[-1].get('steps')}")
        if hits:
            mean = sum(hits) / len(hits)
            print(f"first resumed step: share of its prompt already evaluated, mean {mean:.2f} over {len(hits)}")
    finally:
        if os.environ.get("KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
