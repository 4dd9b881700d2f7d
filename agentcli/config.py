"""One settings object, layered: defaults < user config < repo `.agentcli.toml` (never for the security settings in
`PROTECTED`, unless the user trusted that exact file) < `AGENTCLI_*` < flags."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agentcli import untrusted
from agentcli.errors import UsageError
from agentcli.paths import config_dir, state_dir
from agentcli.policies import DEFAULT_PROFILE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO_CONFIG = ".agentcli.toml"
SANDBOXES = ("auto", "docker", "bwrap", "host")
# What the sandbox can write may not choose the sandbox: each of these moves the run onto the host, opens the network,
# sends the user's key (or the run) elsewhere, loosens the box, or lifts the user's limits on cost, time and memory,
# so a repository file sets them only once trusted.
PROTECTED = (
    "sandbox",
    "network",
    "api_base",
    "image",
    "container_workdir",
    "memory_mb",
    "cpus",
    "pids",
    "model",
    "summary_model",
    "fallbacks",
    "max_steps",
    "timeout",
    "command_timeout",
    "request_timeout",
    "retry_after_cap",
    "max_cost",
    "max_tokens",
    "context_budget",
    "output_limit",
    "n_ctx",
    "n_threads",
    "candidates",
    "prompts",
)
# `[roles]` in a config file: each role names the setting that holds its model.
ROLES = {"main": "model", "summary": "summary_model"}
REPO_CONFIG_MAX_BYTES = 1 << 20  # a repository file larger than this is not read
TRUST_FILE = "trusted.json"
TOOL_CALLS = ("auto", "on", "off")


@dataclass
class Settings:
    """Everything a run can be configured with. Field names are the config keys."""

    model: str = ""  # empty: the embedded local model unless a provider key is set
    api_base: str = ""
    summary_model: str = ""  # empty: the main model
    sandbox: str = "auto"
    image: str = ""  # docker image; empty: the built-in sandbox image
    container_workdir: str = "/workspace"  # docker: where the repository is mounted (a task image's WORKDIR)
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
    profile: str = DEFAULT_PROFILE  # which policies (the agent's heuristics) a run starts from; see `agentcli policies`
    policies: list[str] = field(default_factory=list)  # switches over the profile: "NAME=off", "NAME=on"
    seed: int = 0  # mixed into every sampled reply's seed (`eval --samples` gives each rollout its own)
    retries: int = 4  # extra tries of a failed model call (429, 5xx, timeouts)
    fallbacks: list[str] = field(default_factory=list)  # models to fall back on, in order, when the model is down
    fallback_cooldown: float = 300.0  # seconds a model that failed is passed over before it is tried again
    retry_after_cap: float = 300.0  # longest `Retry-After` honoured, in seconds
    request_timeout: float = 600.0  # seconds one model request may take
    requests_per_minute: int = 0  # client-side rate limit shared by this user's processes; 0: none
    tokens_per_minute: int = 0  # likewise for prompt + completion tokens; 0: none
    cache: bool = False  # reuse replies to identical requests from the response cache (on for `agentcli eval`)
    cache_max_mb: int = 256  # the response cache's size cap; the least recently used replies go first
    n_ctx: int = 8192  # llama.cpp context cap
    n_threads: int = 0  # llama.cpp threads; 0: the physical cores
    speculative: bool = True  # llama.cpp: greedy replies draft tokens from the conversation, checked in one batch
    prefix_cache: bool = True  # llama.cpp: the system message's KV state kept on disk for the next process
    # LiteLLM models: the actions offered as native tools ("on", "off"; "auto": where LiteLLM knows the
    # model calls functions). A reply in text is read as before either way.
    tool_calls: str = "auto"
    # Replies sampled at a step that changes code where the run has a check; the checks choose (1: off).
    candidates: int = 1
    prompts: str = ""  # a folder of templates that replace the built-in ones of the same name (docs/configuration.md)
    prompt_family: str = ""  # whose templates under prompts/families/ are used; empty: from the model's name

    # Where each value came from: "default", a file path, "env AGENTCLI_X", "flag".
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # Protected keys a repository file set and that were not taken, each with that file's path.
    ignored: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # One-line notices the user should see once before a run (e.g. what the repository file may not set).
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)

    def describe(self) -> list[tuple[str, Any, str]]:
        return [(f.name, getattr(self, f.name), self.sources.get(f.name, "default")) for f in _fields()]


_NOT_SETTINGS = ("sources", "ignored", "warnings")


def _fields():
    return [f for f in fields(Settings) if f.name not in _NOT_SETTINGS]


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
        if kind is list:  # a TOML array, or comma-separated from the environment and flags
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
                raise ValueError
            return [item.strip() for item in items if item.strip()]
        return str(value)
    except ValueError:
        what = "list of strings" if kind is list else kind.__name__
        raise UsageError(f"{origin}: {name} must be a {what}, got {value!r}") from None


def validate(settings: Settings) -> Settings:
    """Reject values no run could use."""
    if settings.sandbox not in SANDBOXES:
        raise UsageError(f"sandbox must be one of {', '.join(SANDBOXES)}, got {settings.sandbox!r}")
    if settings.tool_calls not in TOOL_CALLS:
        raise UsageError(f"tool_calls must be one of {', '.join(TOOL_CALLS)}, got {settings.tool_calls!r}")
    positive = (
        "memory_mb",
        "cpus",
        "pids",
        "max_steps",
        "command_timeout",
        "max_format_errors",
        "request_timeout",
        "cache_max_mb",
        "candidates",
    )
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
        "fallback_cooldown",
        "retry_after_cap",
        "requests_per_minute",
        "tokens_per_minute",
    )
    for name in not_negative:
        if getattr(settings, name) < 0:
            raise UsageError(f"{name} must not be negative, got {getattr(settings, name)}")
    from agentcli.policies import Policies

    Policies.chosen(settings.profile, settings.policies)  # a one-line error for a bad name or switch
    if settings.prompts and not Path(settings.prompts).expanduser().is_dir():
        raise UsageError(f"prompts: {settings.prompts} is not a folder")
    if settings.reply_tokens < 16:
        raise UsageError(f"reply_tokens must be at least 16, got {settings.reply_tokens}")
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    return _parse_toml(data, path)


def _parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    try:
        values = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: invalid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: invalid TOML: {e}") from None
    values = _roles(values, path)
    known = {f.name for f in _fields()}
    unknown = sorted(set(values) - known)
    if unknown:
        raise UsageError(f"{path}: unknown setting {unknown[0]!r} (see `agentcli config show`)")
    return values


def _roles(values: dict[str, Any], path: Path) -> dict[str, Any]:
    """`[roles] summary = "local/..."` is another spelling of `summary_model` (and `main` of `model`)."""
    roles = values.pop("roles", None)
    if roles is None:
        return values
    if not isinstance(roles, dict):
        raise UsageError(f'{path}: roles must be a table, e.g. [roles] summary = "local/qwen2.5-coder-0.5b"')
    for role, model in roles.items():
        if role not in ROLES:
            raise UsageError(f"{path}: unknown role {role!r} (roles: {', '.join(ROLES)})")
        setting = ROLES[role]
        if setting in values:
            raise UsageError(f"{path}: both {setting} and [roles] {role} are set: keep one")
        values[setting] = model
    return values


def read_repo_config(repo: Path) -> tuple[bytes | None, str | None]:
    """The bytes of `repo`'s `.agentcli.toml` and None, or None and why it was not read (None, None: no file).

    The sandbox can write the file, so it is read only when it is a regular file (never through a link,
    never blocking on a FIFO) of at most REPO_CONFIG_MAX_BYTES; a refusal never shows what it holds."""
    path = repo / REPO_CONFIG
    try:
        data = untrusted.read_bytes(repo, REPO_CONFIG, REPO_CONFIG_MAX_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except untrusted.NotAFile as e:
        kind = "a symbolic link" if e.errno == errno.ELOOP else "not a regular file"
        return None, f"{path} is {kind}: ignored (agentcli reads only a regular file there)"
    except OSError as e:
        return None, f"{path}: cannot read ({e.strerror}): ignored"
    if len(data) > REPO_CONFIG_MAX_BYTES:
        return None, f"{path} is larger than {REPO_CONFIG_MAX_BYTES >> 20} MiB: ignored"
    return data, None


def trust_file_path() -> Path:
    return state_dir() / TRUST_FILE


def _trust_key(repo: Path) -> str:
    return str(repo.resolve())


def _read_trust() -> dict[str, str]:
    try:
        data = json.loads(trust_file_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _write_trust(trust: dict[str, str]) -> None:
    """Replace the trust file atomically: a crash leaves the old one or the new one, never half of either."""
    target = trust_file_path()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(prefix=".trusted-", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(trust, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def trusted_digest(repo: Path) -> str | None:
    """The SHA-256 of the `.agentcli.toml` the user trusted for `repo`, if any."""
    return _read_trust().get(_trust_key(repo))


def _trust_state(repo: Path, data: bytes) -> str:
    trusted = trusted_digest(repo)
    if trusted is None:
        return "not trusted"
    return "trusted" if trusted == hashlib.sha256(data).hexdigest() else "changed since it was trusted"


def repo_trust_state(repo: Path) -> str | None:
    """Whether `repo`'s file is trusted ("trusted", "not trusted", "changed since it was trusted"); None: no file."""
    data, _ = read_repo_config(repo)
    return None if data is None else _trust_state(repo, data)


def trust_repo_config(repo: Path) -> tuple[str, dict[str, Any]]:
    """Trust `repo`'s `.agentcli.toml` as it is now: its digest and the protected settings it sets."""
    data, problem = read_repo_config(repo)
    if problem:
        raise UsageError(f"cannot trust: {problem}")
    if data is None:
        raise UsageError(f"nothing to trust: {repo / REPO_CONFIG} does not exist")
    values = _parse_toml(data, repo / REPO_CONFIG)
    digest = hashlib.sha256(data).hexdigest()
    trust = _read_trust()
    trust[_trust_key(repo)] = digest
    _write_trust(trust)
    return digest, {name: values[name] for name in PROTECTED if name in values}


def revoke_repo_trust(repo: Path) -> bool:
    """Forget the trust given to `repo`'s file; False when there was none."""
    trust = _read_trust()
    if trust.pop(_trust_key(repo), None) is None:
        return False
    _write_trust(trust)
    return True


def user_config_path() -> Path:
    return config_dir() / "config.toml"


def load_settings(repo: Path | None = None, flags: dict[str, Any] | None = None) -> Settings:
    """Merge every layer. `flags` holds only the options the user actually passed."""
    settings = Settings()
    layers: list[tuple[str, dict[str, Any]]] = []
    user_file = user_config_path()
    if user_file.is_file():
        layers.append((str(user_file), _read_toml(user_file)))
    if repo is not None:
        layers.extend(_repo_layer(repo, settings))
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


def _repo_layer(repo: Path, settings: Settings) -> list[tuple[str, dict[str, Any]]]:
    """The repository file's settings, less the protected ones unless the user trusted this exact content."""
    path = repo / REPO_CONFIG
    data, problem = read_repo_config(repo)
    if problem:
        settings.warnings.append(problem)
    if data is None:
        return []
    values = _parse_toml(data, path)
    protected = [name for name in PROTECTED if name in values]
    if not protected:
        return [(str(path), values)]
    state = _trust_state(repo, data)
    if state == "trusted":
        mine = {k: v for k, v in values.items() if k in protected}
        return [(str(path), {k: v for k, v in values.items() if k not in protected}), (f"{path} (trusted)", mine)]
    for name in protected:
        settings.ignored[name] = str(path)
    why = (
        "the file changed since it was trusted (`agentcli config trust` to trust it again)"
        if state != "not trusted"
        else "the repository is not trusted for them (`agentcli config trust` to allow)"
    )
    settings.warnings.append(f"{path} sets {', '.join(protected)}: ignored, {why}")
    return [(str(path), {k: v for k, v in values.items() if k not in protected})]
