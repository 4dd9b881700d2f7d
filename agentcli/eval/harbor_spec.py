"""What a Harbor task folder asks for: its `task.toml` settings, and whether the folder is sound.

Harbor's layout (Terminal-Bench 2.0): `instruction.md`, `task.toml`, `environment/Dockerfile`,
`tests/test.sh`, optionally `solution/solve.sh`. How such a task runs is `harbor.py`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

VERIFIER_TIMEOUT_S = 120.0
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[iI]?[bB]?\s*$")


@dataclass
class HarborSpec:
    """What `task.toml` asks of the run."""

    agent_timeout: float | None = None
    verifier_timeout: float = VERIFIER_TIMEOUT_S
    cpus: float | None = None
    memory_mb: int | None = None
    allow_internet: bool = False


def is_harbor_task(folder: Path) -> bool:
    return (folder / "task.toml").is_file() and (folder / "environment").is_dir()


def read_spec(folder: Path) -> tuple[HarborSpec, list[str]]:
    """The task's settings from `task.toml`, and what is wrong with the folder (empty when nothing)."""
    spec, problems = HarborSpec(), []
    if not (folder / "environment" / "Dockerfile").is_file():
        problems.append("missing environment/Dockerfile")
    test = folder / "tests" / "test.sh"
    if not test.is_file():
        problems.append("missing tests/test.sh")
    elif not os.access(test, os.X_OK):
        problems.append("tests/test.sh is not executable")
    try:
        data = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return spec, [*problems, f"task.toml: {e}"]
    agent, verifier, environment = (data.get(k) or {} for k in ("agent", "verifier", "environment"))
    try:
        if "timeout_sec" in agent:
            spec.agent_timeout = float(agent["timeout_sec"])
        spec.verifier_timeout = float(verifier.get("timeout_sec", VERIFIER_TIMEOUT_S))
        if "cpus" in environment:
            spec.cpus = float(environment["cpus"])
        if "memory_mb" in environment:
            spec.memory_mb = int(environment["memory_mb"])
        elif "memory" in environment:
            spec.memory_mb = _megabytes(str(environment["memory"]))
        spec.allow_internet = bool(environment.get("allow_internet", False))
    except (TypeError, ValueError) as e:
        problems.append(f"task.toml: {e}")
    return spec, problems


def _megabytes(text: str) -> int:
    """'4G', '2048M', '512MiB' -> MiB."""
    found = _MEMORY.match(text)
    if found is None:
        raise ValueError(f"memory {text!r} is not a size like 4G or 2048M")
    number, unit = float(found.group(1)), found.group(2).lower()
    return int(number * {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024}[unit])
