"""One settings object, layered: defaults < user config < repo `.agentcli.toml` < `AGENTCLI_*` < flags."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.paths import config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO_CONFIG = ".agentcli.toml"
SANDBOXES = ("auto", "docker", "bwrap", "host")


@dataclass
class Settings:
    """Everything a run can be configured with. Field names are the config keys."""

    model: str = ""  # empty: the embedded local model unless a provider key is set
    api_base: str = ""
    summary_model: str = ""  # empty: the main model
    sandbox: str = "auto"
    image: str = ""  # docker image; empty: the built-in sandbox image
    network: bool = False
    memory_mb: int = 4096
    cpus: float = 2.0
    pids: int = 512
    max_steps: int = 40
    timeout: float = 0.0  # wall-clock seconds for a run; 0: none
    command_timeout: float = 120.0
    max_cost: float = 0.0  # dollars; 0: none
    max_tokens: int = 0  # prompt + completion tokens over the run; 0: none
    max_format_errors: int = 5
    context_budget: int = 0  # tokens; 0: the model's window
    reply_tokens: int = 1024
    output_limit: int = 4000  # characters of one command's output the model sees
    repo_map_tokens: int = 1024
    file_view_tokens: int = 1536  # file contents shown at the start
    temperature: float = 0.0
    retries: int = 4  # extra tries of a failed model call (429, 5xx, timeouts)
    n_ctx: int = 8192  # llama.cpp context cap
    n_threads: int = 0  # llama.cpp threads; 0: the physical cores

    # Where each value came from: "default", a file path, "env AGENTCLI_X", "flag".
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def describe(self) -> list[tuple[str, Any, str]]:
        return [(f.name, getattr(self, f.name), self.sources.get(f.name, "default")) for f in _fields()]


def _fields():
    return [f for f in fields(Settings) if f.name != "sources"]


def _coerce(name: str, value: Any, origin: str) -> Any:
    """Turn a TOML or environment value into the field's type, or fail with a one-line error."""
    default = getattr(Settings(), name)
    kind = type(default)
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError
        if kind is int:
            if isinstance(value, bool):
                raise ValueError
            return int(str(value).strip())
        if kind is float:
            if isinstance(value, bool):
                raise ValueError
            return float(str(value).strip())
        return str(value)
    except ValueError:
        raise UsageError(f"{origin}: {name} must be a {kind.__name__}, got {value!r}") from None


def validate(settings: Settings) -> Settings:
    """Reject values no run could use."""
    if settings.sandbox not in SANDBOXES:
        raise UsageError(f"sandbox must be one of {', '.join(SANDBOXES)}, got {settings.sandbox!r}")
    positive = ("memory_mb", "cpus", "pids", "max_steps", "command_timeout", "max_format_errors")
    for name in positive:
        if getattr(settings, name) <= 0:
            raise UsageError(f"{name} must be positive, got {getattr(settings, name)}")
    not_negative = (
        "n_threads",
        "retries",
        "timeout",
        "max_cost",
        "max_tokens",
        "context_budget",
        "repo_map_tokens",
        "file_view_tokens",
        "output_limit",
    )
    for name in not_negative:
        if getattr(settings, name) < 0:
            raise UsageError(f"{name} must not be negative, got {getattr(settings, name)}")
    if settings.reply_tokens < 16:
        raise UsageError(f"reply_tokens must be at least 16, got {settings.reply_tokens}")
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: invalid TOML: {e}") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    known = {f.name for f in _fields()}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UsageError(f"{path}: unknown setting {unknown[0]!r} (see `agentcli config show`)")
    return data


def user_config_path() -> Path:
    return config_dir() / "config.toml"


def load_settings(repo: Path | None = None, flags: dict[str, Any] | None = None) -> Settings:
    """Merge every layer. `flags` holds only the options the user actually passed."""
    settings = Settings()
    layers: list[tuple[str, dict[str, Any]]] = []
    user_file = user_config_path()
    if user_file.is_file():
        layers.append((str(user_file), _read_toml(user_file)))
    if repo is not None and (repo / REPO_CONFIG).is_file():
        layers.append((str(repo / REPO_CONFIG), _read_toml(repo / REPO_CONFIG)))
    env = {}
    for f in _fields():
        key = f"AGENTCLI_{f.name.upper()}"
        if key in os.environ:
            env[f.name] = os.environ[key]
    layers.append(("env", env))
    layers.append(("flag", {k: v for k, v in (flags or {}).items() if v is not None}))
    for origin, values in layers:
        for name, value in values.items():
            label = f"env AGENTCLI_{name.upper()}" if origin == "env" else origin
            setattr(settings, name, _coerce(name, value, label))
            settings.sources[name] = label
    return validate(settings)
