"""Outcome checks for add-cli-flag."""

import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def greet(*args):
    proc = subprocess.run(
        [sys.executable, "greet.py", *args],
        cwd=WORKDIR,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_shout():
    assert greet("Ada", "--shout") == "HELLO, ADA!"


def test_shout_before_name_and_with_greeting():
    assert greet("--shout", "--greeting", "Hi", "Bob") == "HI, BOB!"


def test_default_unchanged():
    assert greet("Ada") == "Hello, Ada!"
    assert greet("Ada", "--greeting", "Welcome") == "Welcome, Ada!"


def test_help_lists_flag():
    assert "--shout" in greet("--help")
