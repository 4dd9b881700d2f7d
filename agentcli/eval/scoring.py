"""Run a task's tests against a work dir and read the outcome from pytest's JUnit XML."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from agentcli.eval.procs import Children, Finished
from agentcli.eval.workspace import harness_env

TEST_TIMEOUT_S = 120.0


@dataclass
class TestOutcome:
    __test__ = False  # not a pytest test class

    returncode: int
    passed: int = 0
    total: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    note: str = ""  # why the tests gave no usable result, when they did not

    @property
    def reward(self) -> int:
        """1 only when pytest itself says every test passed."""
        return 1 if self.returncode == 0 and not self.timed_out and self.total > 0 else 0

    @property
    def share(self) -> float:
        return round(self.passed / self.total, 4) if self.total else 0.0


@dataclass
class JunitCounts:
    total: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    @property
    def passed(self) -> int:
        return max(0, self.total - self.failed - self.errors - self.skipped)


def parse_junit(path: Path) -> JunitCounts:
    """Sum the counts of every <testsuite> (pytest writes one inside <testsuites>)."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    counts = JunitCounts()
    for suite in suites:
        counts.total += int(suite.get("tests", 0))
        counts.failed += int(suite.get("failures", 0))
        counts.errors += int(suite.get("errors", 0))
        counts.skipped += int(suite.get("skipped", 0))
    return counts


def run_tests(
    children: Children, workdir: Path, tests: Path, out_dir: Path, timeout: float = TEST_TIMEOUT_S
) -> TestOutcome:
    """`pytest tests/` from the folder that holds the tests, the work dir in AGENTCLI_TASK_WORKDIR.

    Writes `tests.log` and `junit.xml` to `out_dir`.
    """
    junit = out_dir / "junit.xml"
    junit.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", str(tests)]
    env = harness_env(AGENTCLI_TASK_WORKDIR=str(workdir))
    env.pop("PYTEST_ADDOPTS", None)  # the eval's own pytest options (in the test suite) must not leak in
    run: Finished = children.run(argv, cwd=tests.parent, env=env, timeout=timeout, stdout=out_dir / "tests.log")
    outcome = TestOutcome(returncode=run.returncode, seconds=round(run.seconds, 3), timed_out=run.timed_out)
    if run.timed_out:
        outcome.note = f"tests timed out after {timeout:g} s"
    try:
        counts = parse_junit(junit)
    except (OSError, ET.ParseError):
        if not outcome.note:
            outcome.note = f"pytest wrote no results (exit {run.returncode})"
        return outcome
    outcome.total, outcome.passed = counts.total, counts.passed
    if outcome.total == 0 and not outcome.note:
        outcome.note = "no tests were collected"
    return outcome
