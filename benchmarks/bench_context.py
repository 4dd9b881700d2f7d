"""Context management over a long session: tokens per step, compactions, prefix stability, recall.

Run: python benchmarks/bench_context.py [--steps 300] [--budget 8192] [--summary-model local/qwen2.5-coder-0.5b]

A scripted agent works through a synthetic repository for `--steps` steps: real commands in a real
host sandbox (cat, grep, pytest, sed, git, logs; mostly short outputs, some long ones), counted
with tiktoken's cl100k_base. Printed:
  1. tokens sent per step and compactions, beside a baseline that keeps the whole history;
  2. prefix stability: the share of steps whose prompt extends the previous one (target >= 90 %),
     and the share of prompt tokens a prefix cache could reuse;
  3. recall: a port number and a file name seen in an observation at step 3 must still be in the
     prompt at step `--recall-step`, with summaries by a real local model (and with the digest only).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.context.summary import ModelSummarizer, SummaryRequest
from agentcli.context.tokens import TokenCounter, tiktoken_count
from agentcli.context.window import ContextWindow, Summarizer, digest_only
from agentcli.events import ContextCompacted, Event, EventBus
from agentcli.models.base import Message
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox

PORT = "48213"
PROBE = "ready_check_v2.py"
TASK = (
    "The readiness probe fails in staging. Find the port the service is configured with and make "
    "the probe use it; keep the tests passing."
)


class CountedModel(ScriptedModel):
    """Scripted replies, counted with a real tokenizer (cl100k_base, offline)."""

    def count_tokens(self, messages: list[Message]) -> int:
        return tiktoken_count(messages)


# -- the synthetic repository and session ----------------------------------------------------------


def build_repo(root: Path, rng: random.Random) -> int:
    """A small service: modules, tests (one failing), config, logs. Returns the number of modules."""
    modules = 24
    (root / "src" / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "config").mkdir()
    (root / "probes").mkdir()
    (root / "logs").mkdir()
    for k in range(modules):
        lines = [f'"""Module {k}: part of the order service."""', "", "import math", ""]
        for f in range(rng.randint(4, 12)):
            lines += [
                f"def handle_{k}_{f}(order, limit={rng.randint(1, 99)}):",
                f'    """Apply rule {f} of module {k} to an order."""',
                "    total = sum(item['price'] * item['qty'] for item in order['items'])",
                f"    if total > limit * {rng.randint(2, 9)}:",
                f"        return round(total * 0.{rng.randint(10, 99)}, 2)  # TODO: check rounding",
                "    return math.floor(total)",
                "",
            ]
        (root / "src" / "app" / f"mod{k}.py").write_text("\n".join(lines))
        test = [
            "import sys",
            "sys.path.insert(0, 'src')",
            f"from app.mod{k} import handle_{k}_0",
            "",
            f"def test_mod{k}():",
            f"    assert handle_{k}_0({{'items': [{{'price': 1, 'qty': 1}}]}}) {'==' if k % 5 else '!='} 1",
        ]
        (root / "tests" / f"test_mod{k}.py").write_text("\n".join(test) + "\n")
    (root / "src" / "app" / "__init__.py").write_text("")
    (root / "config" / "service.ini").write_text(
        f"[service]\nname = orders\nport = {PORT}\nworkers = 4\n\n[probe]\nscript = probes/{PROBE}\ntimeout = 3\n"
    )
    (root / "probes" / PROBE).write_text("import sys\nPORT = 8080  # wrong\nprint('probe', PORT)\n")
    log = [
        f"2024-05-0{1 + i % 9} 12:{i % 60:02d}:00 INFO request {i} served in {rng.randint(1, 900)} ms"
        for i in range(6000)
    ]
    (root / "logs" / "app.log").write_text("\n".join(log) + "\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "init"], cwd=root, check=True
    )
    return modules


def session_replies(steps: int, modules: int, rng: random.Random) -> list[str]:
    """The agent's turns: a plan, the planted fact at step 3, then a mix of everyday commands."""
    replies = [
        "PLAN:\n1. Find the service configuration.\n2. Fix the probe.\n3. Run the tests.\n\n```bash\nls -la\n```",
        "```bash\nls config probes\n```",
        "The port is in the config.\n```bash\ncat config/service.ini\n```",
    ]
    small = [
        lambda k: f"grep -n 'def ' src/app/mod{k}.py | head -5",
        lambda k: "git status --short",
        lambda k: f"wc -l src/app/mod{k}.py tests/test_mod{k}.py",
        lambda k: f"sed -i 's/# TODO: check rounding/# rounding checked/' src/app/mod{k}.py",
        lambda k: f"python3 -m pytest -q tests/test_mod{k}.py 2>&1 | tail -3",
        lambda k: "ls src/app | head -30",
        lambda k: f"grep -c TODO src/app/mod{k}.py",
    ]
    medium = [
        lambda k: f"cat -n src/app/mod{k}.py | head -60",
        lambda k: "git diff | head -80",
        lambda k: f"python3 -m pytest -q tests/test_mod{k}.py",
        lambda k: "grep -rn 'limit=' src/app | head -40",
    ]
    large = [
        lambda k: "cat logs/app.log",
        lambda k: "grep -rn 'def handle' src",
        lambda k: "python3 -m pytest -q tests",
    ]
    for _ in range(4, steps):
        k = rng.randrange(modules)
        roll = rng.random()
        kind = small if roll < 0.6 else medium if roll < 0.92 else large
        command = rng.choice(kind)(k)
        thought = rng.choice(
            ["Check the next module.", "Look at the tests.", "See what changed.", "Narrow it down.", "Verify."]
        )
        replies.append(f"{thought}\n```bash\n{command}\n```")
    replies.append(f"DONE: the probe now reads port {PORT} from config/service.ini.")
    return replies


# -- running and measuring ---------------------------------------------------------------------------


@dataclass
class Run:
    prompt_tokens: list[int] = field(default_factory=list)
    stable: list[bool] = field(default_factory=list)  # the prompt extends the previous one
    reusable: list[int] = field(default_factory=list)  # tokens of the common prefix with the previous prompt
    compactions: list[ContextCompacted] = field(default_factory=list)
    summary_seconds: list[float] = field(default_factory=list)
    last_prompt: list[Message] = field(default_factory=list)
    wall: float = 0.0


def common_prefix(a: list[Message], b: list[Message]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def run_session(
    repo: Path,
    replies: list[str],
    window: int,
    reply_tokens: int,
    summarizer: Summarizer,
    steps: int,
) -> Run:
    model = CountedModel(replies, context_window=window)
    counter = TokenCounter(tiktoken_count)
    record = Run()

    def timed(request: SummaryRequest) -> str:
        started = time.perf_counter()
        try:
            return summarizer(request)
        finally:
            record.summary_seconds.append(time.perf_counter() - started)

    def listen(event: Event) -> None:
        if isinstance(event, ContextCompacted):
            record.compactions.append(event)

    context = ContextWindow(
        model,
        window=window,
        reply_tokens=reply_tokens,
        summarizer=timed,
        on_event=listen,
        counter=counter,
    )
    started = time.perf_counter()
    with HostSandbox(
        repo, repo.parent / f"{repo.name}-state" / "commands", output_limit=context.observation_chars(4000)
    ) as box:
        agent = Agent(
            model,
            box,
            EventBus([listen]),
            limits=RunLimits(max_steps=steps, reply_tokens=reply_tokens),
            context=context,
        )
        agent.run(TASK)
    record.wall = time.perf_counter() - started
    previous: list[Message] = []
    for prompt in model.calls:
        record.prompt_tokens.append(counter.messages(prompt))
        shared = common_prefix(previous, prompt)
        record.stable.append(bool(previous) and shared == len(previous))
        record.reusable.append(counter.messages(prompt[:shared]))
        previous = prompt
    record.last_prompt = model.calls[-1] if model.calls else []
    return record


def fresh_repo(seed: int) -> tuple[Path, int]:
    root = Path(tempfile.mkdtemp(prefix="agentcli-bench-context-"))
    return root, build_repo(root, random.Random(seed))


# -- reports -----------------------------------------------------------------------------------------


def stability(run: Run) -> float:
    return 100 * sum(run.stable[1:]) / max(1, len(run.stable) - 1)


def reuse(run: Run) -> float:
    return 100 * sum(run.reusable[1:]) / max(1, sum(run.prompt_tokens[1:]))


def evaluated(run: Run) -> int:
    return sum(run.prompt_tokens) - sum(run.reusable)


def report_tokens(windowed: Run, baseline: Run, budget: int, reply_tokens: int) -> None:
    print(f"\n1. Tokens sent per step over {len(windowed.prompt_tokens)} steps (cl100k_base)")
    print(f"   window {budget} tokens, {reply_tokens} kept for the reply: prompts may take {budget - reply_tokens}")
    header = f"   {'':34}{'windowed':>12}{'no compaction':>16}"
    print(header)
    rows = [
        ("mean tokens per step", statistics.mean(windowed.prompt_tokens), statistics.mean(baseline.prompt_tokens)),
        ("median", statistics.median(windowed.prompt_tokens), statistics.median(baseline.prompt_tokens)),
        ("max", max(windowed.prompt_tokens), max(baseline.prompt_tokens)),
        ("total sent", sum(windowed.prompt_tokens), sum(baseline.prompt_tokens)),
    ]
    for label, a, b in rows:
        print(f"   {label:34}{a:>12,.0f}{b:>16,.0f}")
    for step in (1, 10, 50, 100, 150, 200, 250, 300):
        if step <= len(windowed.prompt_tokens):
            a, b = windowed.prompt_tokens[step - 1], baseline.prompt_tokens[step - 1]
            print(f"   {'at step ' + str(step):34}{a:>12,}{b:>16,}")
    limit = budget - reply_tokens
    over = [t > limit for t in baseline.prompt_tokens]
    first = over.index(True) + 1 if any(over) else "-"
    print(
        f"   steps over the window's prompt limit: windowed {sum(t > limit for t in windowed.prompt_tokens)}, "
        f"no compaction {sum(over)} (from step {first})"
    )
    folds = [c for c in windowed.compactions if c.folded_messages]
    per_fold = statistics.median([c.folded_messages for c in folds]) if folds else 0
    print(
        f"   compactions: {len(folds)} (every {len(windowed.prompt_tokens) / max(1, len(folds)):.1f} steps), "
        f"fallback digest {sum(c.fallback for c in folds)}, messages folded per compaction: median {per_fold:.0f}"
    )
    print(f"   session wall time: windowed {windowed.wall:.1f} s, no compaction {baseline.wall:.1f} s")


def report_stability(windowed: Run, baseline: Run) -> None:
    print("\n2. Prefix stability")
    ok = "meets" if stability(windowed) >= 90 else "misses"
    print(
        f"   steps whose prompt extends the previous one: windowed {sum(windowed.stable[1:])} of "
        f"{len(windowed.stable) - 1}, {stability(windowed):.2f} % ({ok} the 90 % target), "
        f"no compaction {stability(baseline):.1f} %"
    )
    print(
        f"   prompt tokens reusable from the previous prompt's prefix: windowed {reuse(windowed):.1f} %, "
        f"no compaction {reuse(baseline):.1f} %"
    )
    print(
        f"   tokens a prefix cache must still evaluate over the session: windowed {evaluated(windowed):,}, "
        f"no compaction {evaluated(baseline):,}"
    )


def recall_line(label: str, run: Run, step: int) -> None:
    prompt = "\n".join(m["content"] for m in run.last_prompt)
    notes = run.last_prompt[1]["content"] if len(run.last_prompt) > 1 else ""
    verbatim_from = len(run.prompt_tokens)
    port, probe = PORT in prompt, PROBE in prompt
    where = "in the summary notes" if (PORT in notes or PROBE in notes) else "not in the notes"
    folds = [c for c in run.compactions if c.folded_messages]
    timing = (
        f", summary calls: {len(run.summary_seconds)}, median {statistics.median(run.summary_seconds):.1f} s"
        if run.summary_seconds
        else ""
    )
    print(
        f"   {label}: at step {verbatim_from}: port {PORT} {'KEPT' if port else 'LOST'}, file {PROBE} "
        f"{'KEPT' if probe else 'LOST'} ({where}; {len(folds)} compactions, "
        f"{sum(c.fallback for c in folds)} by digest{timing})"
    )


def load_summary_model(name: str, n_ctx: int):
    from agentcli.config import Settings
    from agentcli.models.resolve import create_model

    return create_model(name, Settings(n_ctx=n_ctx, temperature=0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--budget", type=int, default=8192, help="context window in tokens")
    parser.add_argument("--reply-tokens", type=int, default=1024)
    parser.add_argument("--recall-step", type=int, default=200)
    parser.add_argument("--summary-model", default="local/qwen2.5-coder-0.5b", help="'' to skip the model recall run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--other-budgets", default="4096,16384,32768", help="more windows for the stability figures")
    args = parser.parse_args()

    repo, modules = fresh_repo(args.seed)
    replies = session_replies(args.steps, modules, random.Random(args.seed))
    windowed = run_session(repo, replies, args.budget, args.reply_tokens, digest_only, args.steps)
    repo, _ = fresh_repo(args.seed)
    baseline = run_session(repo, replies, 10**9, args.reply_tokens, digest_only, args.steps)
    report_tokens(windowed, baseline, args.budget, args.reply_tokens)
    report_stability(windowed, baseline)
    for budget in (int(b) for b in args.other_budgets.split(",") if b.strip()):
        repo, _ = fresh_repo(args.seed)
        other = run_session(repo, replies, budget, args.reply_tokens, digest_only, args.steps)
        folds = sum(1 for c in other.compactions if c.folded_messages)
        print(
            f"   at a {budget}-token window: {stability(other):.1f} % of steps extend the previous prompt, "
            f"{reuse(other):.1f} % of prompt tokens reusable, {folds} compactions, {evaluated(other):,} evaluated, "
            f"mean {statistics.mean(other.prompt_tokens):,.0f} tokens per step"
        )

    print(f"\n3. Recall of a fact seen at step 3 (config/service.ini: port {PORT}, probes/{PROBE})")
    short = [*replies[: args.recall_step - 1], replies[-1]]
    repo, _ = fresh_repo(args.seed)
    digest_run = run_session(repo, short, args.budget, args.reply_tokens, digest_only, args.recall_step)
    recall_line("digest only (no summary model)", digest_run, args.recall_step)
    if args.summary_model:
        model = load_summary_model(args.summary_model, n_ctx=args.budget)
        repo, _ = fresh_repo(args.seed)
        summarised = run_session(
            repo, short, args.budget, args.reply_tokens, ModelSummarizer(model, window=args.budget), args.recall_step
        )
        recall_line(f"summaries by {args.summary_model}", summarised, args.recall_step)
        print(f"   prefix stability with model summaries: {stability(summarised):.1f} %")
        notes = summarised.last_prompt[1]["content"].split("\n\n", 1)[-1] if summarised.last_prompt else ""
        print("   the notes at that step:\n" + "\n".join("     | " + line for line in notes.splitlines()))


if __name__ == "__main__":
    main()
