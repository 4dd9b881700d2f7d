"""Benchmark the in-process llama.cpp backend on a scripted agent session.

(a) A growing conversation (system prompt + task, then N x [assistant reply ~60 tokens, observation
    ~150 tokens]), one `complete(max_tokens=64)` per step: prompt tokens sent vs evaluated, the share
    served from the KV cache, and step latency and generation speed against the raw library
    (`Llama.create_chat_completion` on a fresh cache) at sampled steps.
(b) The same session through `python -m llama_cpp.server` driven by LiteLLM, side by side.
(c) Speculative decoding (drafts from the conversation, agentcli's own), off vs on under the reply
    grammar: a reply that rewrites a 30-line file it just read, and a short command reply, greedy and
    sampled at 0.3 as a retried attempt is (`--spec-temperatures`).
(d) Decode speed under the reply grammar (agent/reply_grammar.py) against the same backend without it
    (the empty-block rule on, as runs without the grammar have it) and the raw library, alternating.

Usage: python benchmarks/bench_llamacpp.py [--model local/qwen2.5-coder-1.5b] [--steps 20]
       [--raw-steps 1,10,20] [--skip-server] [--skip-speculative] [--skip-grammar]
The machine may be shared: steps of the three backends are interleaved so noise hits them alike.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.models.base import Message
from agentcli.models.catalog import DEFAULT_LOCAL_MODEL

MAX_TOKENS = 64

SYSTEM = """You are agentcli, a coding agent working in a terminal on the user's repository.
Each turn, think briefly, then give exactly ONE shell command in a fenced ```bash block.
You will see the command's exit code and output; then give the next command.
Rules:
- One command per reply. Never two blocks.
- Commands run with /bin/sh in the repository root; the shell keeps cd and variables.
- Do not use interactive programs (vim, less, python without -c).
- Prefer small, checkable steps: look, change one thing, run the tests.
- To edit files use sed -i, or write the whole file with cat <<'EOF' > path.
- When the task is done and the tests pass, reply with the single line FINISHED.
Example:
THOUGHT: I need to see which files exist.
```bash
ls -la
```"""

TASK = """Task: the test suite of the `calc` package fails. Run the tests, find the bug in calc/ops.py,
fix it with the smallest change, and make every test pass without editing the tests."""

COMMANDS = [
    ("I should look at the repository layout first.", "ls -la"),
    ("Let me run the tests to see what fails.", "python -m pytest -q"),
    ("The failure is in test_ops. Let me read calc/ops.py.", "cat calc/ops.py"),
    ("I want to see the failing test itself.", "sed -n 1,40p tests/test_ops.py"),
    ("Let me check how divide is used elsewhere.", "grep -rn 'divide' --include=*.py ."),
    ("The range in mean looks off by one. Let me check.", "grep -n 'range' calc/ops.py"),
    ("I will fix the loop bound in mean.", "sed -i 's/range(1, len(xs))/range(len(xs))/' calc/ops.py"),
    ("Run the tests again to check the fix.", "python -m pytest -q"),
    ("One test still fails: rounding in percent.", "sed -n 40,80p tests/test_ops.py"),
    ("Let me look at percent in ops.py.", "grep -n 'def percent' -A 8 calc/ops.py"),
    ("It truncates instead of rounding.", "sed -i 's/int(value \\* 100)/round(value * 100)/' calc/ops.py"),
    ("Run the percent tests only.", "python -m pytest -q -k percent"),
    ("Check the full suite once more.", "python -m pytest -q"),
    ("Let me make sure nothing else uses the old behaviour.", "git grep -n 'percent('"),
    ("Look at the diff so far.", "git diff"),
    ("Check the package imports cleanly.", "python -c 'import calc; print(calc.__version__)'"),
    ("Run the linters the project uses.", "python -m pyflakes calc || true"),
    ("Check the changelog mentions fixes.", "tail -n 20 CHANGELOG.md"),
    ("Add a changelog line for the fix.", "printf '%s\\n' '- fix mean and percent' >> CHANGELOG.md"),
    ("Final test run before finishing.", "python -m pytest -q"),
]

_OUTPUT_LINES = [
    "calc/__init__.py:3: __version__ = '0.4.{n}'",
    "tests/test_ops.py::test_mean_{n} FAILED                              [ {p}%]",
    "    def mean(xs):\n        total = 0\n        for i in range(1, len(xs)):\n            total += xs[i]",
    "E       assert 2.0 == 2.5\nE        +  where 2.0 = mean([1, 2, 3, 4])",
    "-rw-r--r-- 1 dev dev  {b} Nov  3 10:{n:02d} ops.py",
    "drwxr-xr-x 2 dev dev 4096 Nov  3 10:{n:02d} tests",
    "calc/ops.py:{n}:def percent(value):\n        return int(value * 100) / 100",
    "FAILED tests/test_ops.py::test_percent_{n} - AssertionError: 0.33 != 0.34",
    "========== {f} failed, {p} passed in 0.{n:02d}s ==========",
    "tests/test_ops.py:{n}:    assert divide(1, {n}) == pytest.approx({q})",
]


def _timings(started: float, stamps: list[float], text: list[str]) -> dict[str, float | str]:
    """Latency, time to first token and tokens per second of one streamed reply."""
    ended = time.perf_counter()
    return {
        "latency": ended - started,
        "ttft": stamps[0] - started if stamps else float("nan"),
        "tps": (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 2 else float("nan"),
        "text": "".join(text),
    }


def observation(step: int) -> str:
    """A realistic command output of about 150 tokens, different for every step."""
    lines = []
    for i in range(5):
        template = _OUTPUT_LINES[(step * 3 + i) % len(_OUTPUT_LINES)]
        n = step * 7 + i
        lines.append(template.format(n=n % 60, p=(n * 13) % 100, b=1000 + n * 37, f=n % 3, q=round(1 / (n + 1), 4)))
    return f"<returncode>{step % 2}</returncode>\n<output>\n" + "\n".join(lines) + "\n</output>"


def reply(step: int) -> str:
    thought, command = COMMANDS[step % len(COMMANDS)]
    return (
        f"THOUGHT: {thought} This is step {step + 1} of the plan. I keep each change minimal and check the"
        f" result before moving on, so a mistake shows up at once.\n```bash\n{command}\n```"
    )


def conversation(steps_done: int) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for step in range(steps_done):
        messages.append({"role": "assistant", "content": reply(step)})
        messages.append({"role": "user", "content": observation(step)})
    return messages


# --- backends -----------------------------------------------------------------------------------


def raw_fresh(llama, messages: list[Message], reset: bool = True, grammar=None) -> dict[str, float]:
    """The raw library on an empty cache: `create_chat_completion`, streamed (under the library's own
    grammar sampler where `grammar` is given)."""
    if reset:
        llama.reset()
    started = time.perf_counter()
    stamps: list[float] = []
    text = []
    chunks = llama.create_chat_completion(
        messages=messages, max_tokens=MAX_TOKENS, temperature=0.0, stream=True, grammar=grammar
    )
    for chunk in chunks:
        piece = chunk["choices"][0]["delta"].get("content")
        if piece:
            stamps.append(time.perf_counter())
            text.append(piece)
    return _timings(started, stamps, text)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(path: Path, n_ctx: int, threads: int, logits_all: bool) -> tuple[subprocess.Popen, int]:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", "local",
        "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
        "--logits_all", str(logits_all), "--host", "127.0.0.1", "--port", str(port), "--verbose", "False",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("llama_cpp.server exited; is `llama-cpp-python[server]` installed?")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1):
                return server, port
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("llama_cpp.server did not answer within 120 s")


def via_server(litellm, port: int, messages: list[Message]) -> dict[str, float]:
    started = time.perf_counter()
    stamps: list[float] = []
    text = []
    stream = litellm.completion(
        model="openai/local",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key="none",
        messages=messages,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        stream=True,
        extra_body={"repeat_penalty": 1.0},  # the server's default is 1.1; ours and the raw library use none
    )
    for chunk in stream:
        piece = chunk.choices[0].delta.content
        if piece:
            stamps.append(time.perf_counter())
            text.append(piece)
    return _timings(started, stamps, text)


# --- (a) + (b) ----------------------------------------------------------------------------------


def session(args: argparse.Namespace) -> None:
    from agentcli.models.llamacpp import load_local_model

    model = load_local_model(args.model, n_ctx=args.n_ctx, n_threads=args.threads)
    load_started = time.perf_counter()
    model.load()
    print(f"model {model.name}: n_ctx {model.n_ctx}, threads {model.n_threads}, gpu layers {model.n_gpu_layers}")
    print(f"load {time.perf_counter() - load_started:.1f} s")

    raw = None
    raw_steps = {int(s) for s in args.raw_steps.split(",") if s} if args.raw_steps else set()
    if raw_steps:
        import llama_cpp

        raw = llama_cpp.Llama(
            model_path=str(model.path), n_ctx=model.n_ctx, n_threads=model.n_threads, n_threads_batch=model.n_threads,
            n_gpu_layers=model.n_gpu_layers, verbose=False,
        )  # fmt: skip
    server = port = litellm = None
    if not args.skip_server:
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as litellm_module

        litellm = litellm_module
        server, port = start_server(model.path, model.n_ctx, model.n_threads, args.server_logits_all)
    try:
        rows = []
        header = f"{'step':>4} {'sent':>6} {'eval':>5} {'ours s':>7} {'ours tok/s':>10}"
        header += f" {'server s':>8} {'srv tok/s':>9}" if server else ""
        header += f" {'raw s':>7} {'raw tok/s':>9}" if raw else ""
        print(header)
        for step in range(1, args.steps + 1):
            messages = conversation(step - 1)
            started = time.perf_counter()
            ours = model.complete(messages, max_tokens=MAX_TOKENS)
            row = {
                "step": step,
                "sent": ours.usage.prompt_tokens,
                "eval": ours.usage.prompt_evaluated or 0,
                "latency": time.perf_counter() - started,
                "tps": ours.usage.tokens_per_second or float("nan"),
                "tokens": ours.usage.completion_tokens,
                "ttft": ours.usage.time_to_first_token or float("nan"),
                "text": ours.text,
            }
            line = f"{step:>4} {row['sent']:>6} {row['eval']:>5} {row['latency']:>7.2f} {row['tps']:>10.1f}"
            if server:
                row["server"] = via_server(litellm, port, messages)
                line += f" {row['server']['latency']:>8.2f} {row['server']['tps']:>9.1f}"
            if raw and step in raw_steps:
                row["raw"] = raw_fresh(raw, messages)
                line += f" {row['raw']['latency']:>7.2f} {row['raw']['tps']:>9.1f}"
            print(line, flush=True)
            rows.append(row)
        if raw and args.gen_rounds:
            gen_speed(model, raw, args.gen_rounds)
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
    summarise(rows)


def gen_speed(model, raw, rounds: int) -> None:
    """Decode speed alone, ours vs the raw library, alternating on one prompt (both caches warm)."""
    messages = conversation(2)
    ours_tps, raw_tps = [], []
    for _ in range(rounds):
        ours_tps.append(model.complete(messages, max_tokens=MAX_TOKENS).usage.tokens_per_second or float("nan"))
        raw_tps.append(raw_fresh(raw, messages, reset=False)["tps"])
    ratio = _median(ours_tps) / _median(raw_tps)
    print(
        f"decode speed over {rounds} alternating rounds (warm caches): ours {_median(ours_tps):.1f} tok/s,"
        f" raw create_chat_completion {_median(raw_tps):.1f} tok/s: ratio {ratio:.2f} (target >= 0.95)"
    )


def grammar_speed(args: argparse.Namespace) -> None:
    """(d): tokens per second with and without the reply grammar, and the raw library, alternating."""
    import llama_cpp

    from agentcli.agent.reply_grammar import reply_grammar
    from agentcli.models.llamacpp import load_local_model

    model = load_local_model(args.model, n_ctx=args.n_ctx, n_threads=args.threads)
    raw = llama_cpp.Llama(
        model_path=str(model.path), n_ctx=model.n_ctx, n_threads=model.n_threads, n_threads_batch=model.n_threads,
        n_gpu_layers=model.n_gpu_layers, verbose=False,
    )  # fmt: skip
    grammar = reply_grammar()
    native = llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)
    speeds: dict[str, list[float]] = {
        "without grammar": [],
        "with grammar": [],
        "raw library": [],
        "raw + its grammar": [],
    }
    for round_no in range(args.grammar_rounds):
        messages = conversation(2 + round_no % 3)
        free = model.complete(messages, max_tokens=MAX_TOKENS)
        ruled = model.complete(messages, max_tokens=MAX_TOKENS, grammar=grammar)
        speeds["without grammar"].append(free.usage.tokens_per_second or float("nan"))
        speeds["with grammar"].append(ruled.usage.tokens_per_second or float("nan"))
        speeds["raw library"].append(raw_fresh(raw, messages, reset=False)["tps"])
        speeds["raw + its grammar"].append(raw_fresh(raw, messages, reset=False, grammar=native)["tps"])
    base = _median(speeds["raw library"])
    print(f"decode speed over {args.grammar_rounds} alternating rounds (median tok/s, ratio to the raw library):")
    for name, values in speeds.items():
        print(f"  {name:<17} {_median(values):6.1f} tok/s  x{_median(values) / base:.2f}")
    print("  (target: with grammar >= 0.95 x the raw library)")


def _median(values: list[float]) -> float:
    values = [v for v in values if v == v]  # drop NaN
    return statistics.median(values) if values else float("nan")


def summarise(rows: list[dict]) -> None:
    sent = sum(r["sent"] for r in rows)
    evaluated = sum(r["eval"] for r in rows)
    print()
    print(f"prompt tokens sent {sent}, evaluated {evaluated}: {1 - evaluated / sent:.1%} served from the KV cache")
    ours_total = sum(r["latency"] for r in rows)
    print(f"ours: session {ours_total:.1f} s, median step {_median([r['latency'] for r in rows]):.2f} s")
    with_raw = [r for r in rows if "raw" in r]
    if with_raw:
        print("vs raw create_chat_completion on a fresh cache (same prompts):")
        for r in with_raw:
            base = r["raw"]
            same = "same reply" if base["text"].strip() == r["text"].strip() else "different reply"
            print(
                f"  step {r['step']:>2}: {r['sent']} tokens, ours {r['latency']:.2f} s vs raw {base['latency']:.2f} s"
                f" (x{base['latency'] / r['latency']:.1f}); gen {r['tps']:.1f} vs {base['tps']:.1f} tok/s"
                f" ({r['tps'] / base['tps']:.2f}); {same}"
            )
        ratio = _median([r["tps"] / r["raw"]["tps"] for r in with_raw])
        print(f"  generation speed, median ratio ours/raw: {ratio:.2f} (target >= 0.95)")
    with_server = [r for r in rows if "server" in r]
    if with_server:
        server_total = sum(r["server"]["latency"] for r in with_server)
        step_server = _median([r["server"]["latency"] for r in with_server])
        step_ours = _median([r["latency"] for r in rows])
        tps_server = _median([r["server"]["tps"] for r in with_server])
        tps_ours = _median([r["tps"] for r in rows])
        print("vs llama_cpp.server + LiteLLM (same prompts, its own prefix cache):")
        print(
            f"  session {server_total:.1f} s vs ours {ours_total:.1f} s (server/ours {server_total / ours_total:.2f})"
        )
        print(f"  median step {step_server:.2f} s vs {step_ours:.2f} s; gen {tps_server:.1f} vs {tps_ours:.1f} tok/s")
        ttft_server = _median([r["server"]["ttft"] for r in with_server])
        ttft_ours = _median([r["ttft"] for r in rows])
        print(f"  median time to first token {ttft_server:.2f} s vs {ttft_ours:.2f} s")
        same = sum(r["server"]["text"].strip() == r["text"].strip() for r in with_server)
        print(f"  identical replies: {same}/{len(with_server)}")


# --- (c) speculative decoding -------------------------------------------------------------------

FILE_30 = "\n".join(
    [
        '"""Small arithmetic helpers."""',
        "",
        "from __future__ import annotations",
        "",
        "",
        "def add(a: float, b: float) -> float:",
        "    return a + b",
        "",
        "",
        "def sub(a: float, b: float) -> float:",
        "    return a - b",
        "",
        "",
        "def mean(xs: list[float]) -> float:",
        "    total = 0.0",
        "    for i in range(1, len(xs)):",
        "        total += xs[i]",
        "    return total / len(xs)",
        "",
        "",
        "def percent(value: float) -> float:",
        "    return int(value * 100) / 100",
        "",
        "",
        "def divide(a: float, b: float) -> float:",
        "    if b == 0:",
        '        raise ZeroDivisionError("divide by zero")',
        "    return a / b",
        "",
        "__all__ = ['add', 'sub', 'mean', 'percent', 'divide']",
    ]
)

SCENARIOS: dict[str, tuple[list[Message], int]] = {
    "rewrite a 30-line file": (
        [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": "THOUGHT: Let me read the module.\n```bash\ncat calc/ops.py\n```"},
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{FILE_30}\n</output>"},
            {
                "role": "assistant",
                "content": "THOUGHT: mean skips the first element.\n```bash\npython -m pytest -q\n```",
            },
            {
                "role": "user",
                "content": "FAILED tests/test_ops.py::test_mean - assert 2.25 == 2.5\n"
                "Now write the whole fixed calc/ops.py with cat <<'EOF' > calc/ops.py, changing only mean.",
            },
        ],
        420,
    ),
    "short command reply": (conversation(3), MAX_TOKENS),
}


def speculative(args: argparse.Namespace) -> None:
    from agentcli.agent.reply_grammar import reply_grammar
    from agentcli.models.llamacpp import load_local_model

    temperatures = [float(t) for t in args.spec_temperatures.split(",") if t]
    print()
    print("speculative decoding (drafts from the conversation, checked in one batch), fresh cache per run,")
    print("runs alternate off/on, each under the reply grammar as the agent decodes; sampled replies are the")
    print("library's draws off and agentcli's own on (the same distribution, other draws: replies may differ):")
    Run = tuple[float, float, float, int, str, dict]
    results: dict[tuple[str, float, bool], list[Run]] = {}
    for _round in range(args.spec_rounds):
        for spec in (False, True):
            model = load_local_model(args.model, n_ctx=args.n_ctx, n_threads=args.threads, speculative=spec)
            llama = model.load()
            for name, (messages, max_tokens) in SCENARIOS.items():
                for temperature in temperatures:
                    llama.reset()
                    started = time.perf_counter()
                    out = model.complete(
                        messages, max_tokens=max_tokens, grammar=reply_grammar(), temperature=temperature
                    )
                    latency = time.perf_counter() - started
                    results.setdefault((name, temperature, spec), []).append(
                        (
                            latency,
                            out.usage.time_to_first_token or 0.0,
                            out.usage.tokens_per_second or 0.0,
                            out.usage.completion_tokens,
                            out.text,
                            out.raw.get("drafted_tokens") or {},
                        )
                    )
    for name in SCENARIOS:
        for temperature in temperatures:
            off, on = results[(name, temperature, False)], results[(name, temperature, True)]
            lat_off, lat_on = _median([r[0] for r in off]), _median([r[0] for r in on])
            same = all(r[4] == off[0][4] for r in off + on)
            drafts = on[0][5]
            print(
                f"  {name}, temperature {temperature}: {off[0][3]} vs {on[0][3]} tokens;"
                f" latency {lat_off:.2f} s off vs {lat_on:.2f} s on (x{lat_off / lat_on:.2f});"
                f" prompt {_median([r[1] for r in off]):.2f} vs {_median([r[1] for r in on]):.2f} s;"
                f" gen {_median([r[2] for r in off]):.1f} vs {_median([r[2] for r in on]):.1f} tok/s;"
                f" drafted {drafts.get('drafted', 0)}, taken {drafts.get('accepted', 0)}; same replies: {same}"
            )


def main() -> None:
    # SIGTERM ends the run through the `finally` that stops the server process.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_LOCAL_MODEL)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=None, help="default: physical cores (a busy machine: try 1)")
    parser.add_argument("--raw-steps", default="1,10,20", help="steps also run on the raw library ('' for none)")
    parser.add_argument("--gen-rounds", type=int, default=4, help="alternating decode-speed rounds vs raw")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--server-logits-all", action="store_true", help="the server's own default (slower)")
    parser.add_argument("--skip-session", action="store_true")
    parser.add_argument("--skip-speculative", action="store_true")
    parser.add_argument("--spec-rounds", type=int, default=2)
    parser.add_argument("--spec-temperatures", default="0,0.3", help="0: greedy; 0.3: as a retried attempt samples")
    parser.add_argument("--skip-grammar", action="store_true")
    parser.add_argument("--grammar-rounds", type=int, default=6)
    args = parser.parse_args()
    if not args.skip_session:
        session(args)
    if not args.skip_speculative:
        speculative(args)
    if not args.skip_grammar:
        grammar_speed(args)


if __name__ == "__main__":
    main()
