"""What a containerized task folder asks for, and whether the folder is sound, in either layout:

- Harbor's (Terminal-Bench 2.0): `instruction.md`, `task.toml`, `environment/Dockerfile`,
  `tests/test.sh` (writes its reward under `/logs/verifier/`), optionally `solution/solve.sh`;
- the older Terminal-Bench one: `task.yaml` (`instruction`, `max_agent_timeout_sec`,
  `max_test_timeout_sec`), `Dockerfile` at the top, `run-tests.sh` run with `tests/` at `$TEST_DIR`
  (`/tests`) and scored by its pytest summary, optionally `solution.sh`.

How such a task runs is `harbor.py`.
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
    layout: str = "harbor"  # or "terminal-bench": the older layout
    instruction: str = ""  # the older layout's, from task.yaml (Harbor's is instruction.md)
    difficulty: str = ""
    category: str = ""

    @property
    def environment(self) -> str:
        """The image's build context, relative to the task folder."""
        return "environment" if self.layout == "harbor" else "."

    @property
    def solution(self) -> str:
        return "solution/solve.sh" if self.layout == "harbor" else "solution.sh"


def is_harbor_task(folder: Path) -> bool:
    """A task run in its own image: Harbor's layout, or the older Terminal-Bench one."""
    return ((folder / "task.toml").is_file() and (folder / "environment").is_dir()) or _is_legacy(folder)


def _is_legacy(folder: Path) -> bool:
    return (folder / "task.yaml").is_file() and (
        (folder / "Dockerfile").is_file() or (folder / "run-tests.sh").exists()
    )


def read_spec(folder: Path) -> tuple[HarborSpec, list[str]]:
    """The task's settings, and what is wrong with the folder (empty when nothing)."""
    if _is_legacy(folder):
        return _read_legacy(folder)
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


def _read_legacy(folder: Path) -> tuple[HarborSpec, list[str]]:
    """The older Terminal-Bench layout: `task.yaml`, `Dockerfile`, `run-tests.sh`, `tests/`."""
    import yaml

    spec, problems = HarborSpec(layout="terminal-bench"), []
    if not (folder / "Dockerfile").is_file():
        problems.append("missing Dockerfile")
    if not (folder / "run-tests.sh").is_file():
        problems.append("missing run-tests.sh")
    compose = folder / "docker-compose.yaml"
    try:
        if (
            compose.is_file()
            and len((yaml.safe_load(compose.read_text(encoding="utf-8")) or {}).get("services") or {}) > 1
        ):
            problems.append("docker-compose.yaml with several services is not supported")
        data = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError) as e:
        return spec, [*problems, f"task.yaml: {_first_line(e)}"]
    if not isinstance(data, dict):
        return spec, [*problems, "task.yaml: not a mapping"]
    spec.instruction = str(data.get("instruction") or "").strip()
    if not spec.instruction:
        problems.append("task.yaml has no instruction")
    spec.difficulty, spec.category = str(data.get("difficulty") or ""), str(data.get("category") or "")
    try:
        if data.get("max_agent_timeout_sec") is not None:
            spec.agent_timeout = float(data["max_agent_timeout_sec"])
        if data.get("max_test_timeout_sec") is not None:
            spec.verifier_timeout = float(data["max_test_timeout_sec"])
    except (TypeError, ValueError) as e:
        problems.append(f"task.yaml: {e}")
    return spec, problems


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
