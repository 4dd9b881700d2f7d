"""Checks made once before an eval starts, so a bad model name fails now, not once per task."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli.config import Settings
from agentcli.errors import UsageError


def check_model(name: str, settings: Settings, notify: Callable[[str], None]) -> str:
    """The model can be loaded by every task's run: its file exists, its keys are set.

    Returns the name with any file path made absolute, since each run works in another directory.
    A catalog model that is not on this machine yet is pulled here, once, rather than by each
    worker at the same time.
    """
    if name.startswith("scripted:"):
        path = Path(name.removeprefix("scripted:")).resolve()
        if not path.is_file():
            raise UsageError(f"scripted replies file not found: {path}")
        return f"scripted:{path}"
    if name.startswith("local/"):
        from agentcli.models import store

        ref = store.resolve(name)
        if ref.entry is not None and not ref.path.is_file():
            notify(f"{name} is not on this machine yet: fetching it once ({ref.entry.size / 1e9:.1f} GB, verified)")
            store.pull(name, progress=True)
        store.verify(ref)
        return name if ref.entry is not None else f"local/{ref.path}"
    if not settings.api_base:
        from agentcli.models.litellm_backend import missing_api_keys

        if missing := missing_api_keys(name):
            raise UsageError(f"{name} needs an API key: set {' or '.join(missing)} in the environment")
    return name
