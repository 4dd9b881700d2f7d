"""Outcome checks for env-port-default."""

import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
PROBE = "import server; host, port = server.get_address(); print(repr(host), repr(port))"


def address(port=None):
    env = {k: v for k, v in os.environ.items() if k != "PORT"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if port is not None:
        env["PORT"] = port
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=WORKDIR, env=env, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


def test_port_from_environment():
    assert address("9123") == ["'127.0.0.1'", "9123"]


def test_other_port_from_environment():
    assert address("18080") == ["'127.0.0.1'", "18080"]


def test_default_port():
    assert address() == ["'127.0.0.1'", "8000"]
