"""Checks a "done" must pass: the repository's own tests, run in the sandbox.

Small models declare success after an edit they never ran, or after tests they misread. When the
repository has Python tests, they are run (quietly, stopping at the first failure, leaving no
cache files behind) before a "done" is accepted; a failure goes back to the model as its output.
"""

from __future__ import annotations

import base64
import re
import shlex
from dataclasses import dataclass

from agentcli.agent.tracebacks import TEST_FILE, without_library_frames
from agentcli.context.summary import cut_middle
from agentcli.prompts import render
from agentcli.repo.shebang import interpreter
from agentcli.sandbox.base import Observation, Sandbox

PYTEST = "python3 -m pytest -x -q -p no:cacheprovider"
# Where tests failed before the task, every test runs: a new failure must not hide behind an old one.
PYTEST_EVERY = "python3 -m pytest -q -p no:cacheprovider"
# Checking must not leave files in the user's repository.
QUIET_ENV = "PYTHONDONTWRITEBYTECODE=1"
# pytest's exit codes for failing tests and for errors while collecting them; the others (no
# tests, usage error, pytest missing) say nothing about the change.
FAILING = {1, 2}
TEST_TIMEOUT = 90.0
SHOWN_CHARS = 1800
_TIMING = re.compile(r" in \d+(?:\.\d+)?s\b")


def run_quietly(sandbox: Sandbox, command: str, timeout: float) -> Observation:
    """`command` at the repository root, writing no bytecode, in a subshell: the model's shell keeps
    its own directory and variables."""
    return sandbox.run(f"(cd {shlex.quote(sandbox.workdir)} && export {QUIET_ENV} && {command})", timeout=timeout)


def test_command(files: list[str], *, every: bool = False) -> str | None:
    """The command that runs the repository's tests (stopping at the first failure unless `every`),
    or None when it has none we know how to run."""
    if not any(TEST_FILE.search(f) for f in files):
        return None
    return PYTEST_EVERY if every else PYTEST


def failing_tests(sandbox: Sandbox, command: str, timeout: float = TEST_TIMEOUT) -> str | None:
    """What the tests print when they fail, or None when they pass (or cannot say)."""
    obs = run_quietly(sandbox, command, timeout)
    if obs.timed_out or obs.exit_code not in FAILING or "No module named pytest" in obs.output:
        return None
    output = _TIMING.sub("", without_library_frames(obs.output).strip())
    return render("objections/failing_tests", command=command, output=cut_middle(output, SHOWN_CHARS))


# pytest's summary of what failed: `FAILED test_cart.py::test_total - ...`, `ERROR tests/test_cart.py`.
_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def failed_ids(report: str) -> frozenset[str]:
    """The tests (or test files) a `failing_tests` report names as failing; where pytest names none,
    the report itself stands for them."""
    return frozenset(_FAILED_ID.findall(report)) or frozenset({report})


DOCTEST = "python3 -m doctest"
# Examples run in seconds; a module that does more when imported (a script without a main guard)
# is not waited for.
EXAMPLES_TIMEOUT = 20.0
# A docstring example: `>>> parse_duration("1h30m")` on a line of its own.
_EXAMPLE = re.compile(r"^\s*>>> \S", re.MULTILINE)


def has_examples(text: str) -> bool:
    """Whether a Python file's text holds doctest examples."""
    return _EXAMPLE.search(text) is not None


def failing_examples(sandbox: Sandbox, paths: list[str], timeout: float = EXAMPLES_TIMEOUT) -> str | None:
    """What `python3 -m doctest` prints for the examples in `paths` that fail, or None when they pass.

    The examples a docstring gives are the one check a function written from its docstring has
    where the repository has no tests for it."""
    if not paths:
        return None
    command = f"{DOCTEST} {' '.join(shlex.quote(p) for p in paths)}"
    obs = run_quietly(sandbox, command, timeout)
    if obs.timed_out or obs.ok or "Failed example:" not in obs.output:
        return None  # a module doctest cannot import on its own (relative imports) says nothing
    output = without_library_frames(obs.output).strip()
    return render("objections/failing_examples", command=command, output=cut_middle(output, SHOWN_CHARS))


# `sh -n` / `bash -n` read a script and run none of it. bash parses as with extglob on (`!(*.log)`),
# which a script may switch on before the line that uses it.
SHELL_SYNTAX_TIMEOUT = 10.0
_PARSE = {"bash": "bash -O extglob -n", "sh": "sh -n"}
# The most of a script's text before the task that is piped to the shell (base64: nothing to quote).
MAX_PIPED_SCRIPT = 64 << 10


@dataclass(frozen=True)
class Script:
    """A shell script the task changed: its path, the shell that reads it, its text before the task."""

    path: str
    shell: str  # "bash" or "sh"
    before: bytes | None  # None for a script the task created


def shell_of(path: str, head: bytes) -> str | None:
    """The shell that parses a script (`bash` or `sh`), or None when `path` is no shell script: its
    `#!` line decides, else a `.sh` or `.bash` name."""
    name = interpreter(head)
    if name == "bash":
        return "bash"
    if name in ("sh", "dash"):
        return "sh"
    if name is not None:
        return None  # another interpreter's script, whatever its name
    return "bash" if path.endswith((".sh", ".bash")) else None


def broken_shell(sandbox: Sandbox, scripts: list[Script], timeout: float = SHELL_SYNTAX_TIMEOUT) -> str | None:
    """What the shell says of the first of `scripts` that does not parse and did before the task (or
    is new), or None. A script that did not parse before either (bash's syntax in a `#!/bin/sh`
    script, another shell's) is not the task's doing."""
    for script in scripts:
        parse = _PARSE[script.shell]
        obs = run_quietly(sandbox, f"{parse} -- {shlex.quote(script.path)}", timeout)
        if obs.timed_out or obs.exit_code == 0 or not obs.output.strip():
            continue
        if script.before is not None:
            piped = base64.b64encode(script.before).decode()
            if run_quietly(sandbox, f"printf %s {piped} | base64 -d | {parse}", timeout).exit_code != 0:
                continue
        output = cut_middle(obs.output.strip(), SHOWN_CHARS)
        command = f"{parse} {shlex.quote(script.path)}"
        return render("objections/broken_shell", path=script.path, command=command, output=output)
    return None
