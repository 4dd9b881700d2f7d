"""Where agentcli keeps user-level files. Nothing is created until a caller asks for it."""

from __future__ import annotations

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


def data_dir() -> Path:
    """History and other per-user state: `$XDG_DATA_HOME/agentcli` or `~/.local/share/agentcli`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli"
