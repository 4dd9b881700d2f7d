"""Where agentcli keeps user-level files. Nothing is created until a caller asks for it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def config_dir() -> Path:
    """`$AGENTCLI_CONFIG_DIR`, else `$XDG_CONFIG_HOME/agentcli`, else `~/.config/agentcli`."""
    if explicit := os.environ.get("AGENTCLI_CONFIG_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentcli"


def cache_dir() -> Path:
    """`$AGENTCLI_CACHE_DIR`, else `$XDG_CACHE_HOME/agentcli`, else `~/.cache/agentcli`."""
    if explicit := os.environ.get("AGENTCLI_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentcli"


def models_dir() -> Path:
    """Managed GGUF files live here."""
    return cache_dir() / "models"


def state_dir() -> Path:
    """`$AGENTCLI_STATE_DIR`, else `$XDG_STATE_HOME/agentcli`, else `~/.local/state/agentcli`: what agentcli
    keeps of its runs (journals, control channels, checkpoint mirrors), where no sandbox can write."""
    if explicit := os.environ.get("AGENTCLI_STATE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentcli"


def repo_state_dir(root: Path) -> Path:
    """The state kept for one repository, named by its resolved path so two clones never share it."""
    resolved = root.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in resolved.name)[:40] or "root"
    return state_dir() / "repos" / f"{name}-{digest}"


def data_dir() -> Path:
    """History and other per-user state: `$XDG_DATA_HOME/agentcli` or `~/.local/share/agentcli`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli"
