"""Checks a "done" must pass: the repository's own tests, run in the sandbox.

Small models declare success after an edit they never ran, or after tests they misread. When the
repository has Python tests, they are run (quietly, stopping at the first failure, leaving no
cache files behind) before a "done" is accepted; a failure goes back to the model as its output.
"""

from __future__ import annotations

import re
import shlex

from agentcli.agent.tracebacks import TEST_FILE, without_library_frames
from agentcli.context.summary import cut_middle
from agentcli.prompts import render
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


# `sh -n` / `bash -n` read a script and run none of it; a parse takes well under a second.
SHELL_SYNTAX_TIMEOUT = 10.0
# The interpreter a script's first line names: `#!/bin/sh`, `#!/usr/bin/env bash`.
_SHEBANG = re.compile(r"#!\s*\S*?/(?:env\s+)?(bash|sh|dash)\b")


def shell_of(path: str, text: str) -> str | None:
    """The shell that parses a script (`bash` or `sh`), or None when `path` is no shell script."""
    first = text.split("\n", 1)[0]
    if (named := _SHEBANG.match(first)) is not None:
        return "bash" if named.group(1) == "bash" else "sh"
    if first.startswith("#!"):
        return None  # another interpreter's script, whatever its name
    return "bash" if path.endswith((".sh", ".bash")) else None


def broken_shell(sandbox: Sandbox, scripts: list[tuple[str, str]], timeout: float = SHELL_SYNTAX_TIMEOUT) -> str | None:
    """What the shell says of the first of `scripts` (path, shell) that does not parse, or None."""
    for path, shell in scripts:
        obs = run_quietly(sandbox, f"{shell} -n -- {shlex.quote(path)}", timeout)
        if not obs.timed_out and obs.exit_code != 0 and obs.output.strip():
            output = cut_middle(obs.output.strip(), SHOWN_CHARS)
            return render("objections/broken_shell", path=path, shell=shell, output=output)
    return None
