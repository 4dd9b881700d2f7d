"""Outcome checks for fix-flaky-tag-test."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])

PROBE = """
import json, sys
from tags import unique_tags
posts = json.loads(sys.argv[1])
print(json.dumps(unique_tags(posts)))
"""

POSTS = [
    {"tags": ["Zebra", "apple"]},
    {"tags": ["mango", " zebra", "Kiwi"]},
    {},
    {"tags": ["banana", "APPLE", "cherry", "kiwi "]},
]
EXPECTED = ["zebra", "apple", "mango", "kiwi", "banana", "cherry"]


def env(seed):
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": str(seed)}


@pytest.mark.parametrize("seed", [0, 2])
def test_repo_tests_pass_for_any_hash_seed(seed):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tags.py"],
        cwd=WORKDIR,
        env=env(seed),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_first_seen_order_is_kept():
    for seed in range(6):
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(POSTS)],
            cwd=WORKDIR,
            env=env(seed),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(proc.stdout) == EXPECTED, f"PYTHONHASHSEED={seed}"
