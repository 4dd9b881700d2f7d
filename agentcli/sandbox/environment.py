"""The environment commands see: the user's, minus anything that looks like a secret."""

from __future__ import annotations

import os
import re

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.IGNORECASE)
# Variables that steer agentcli or the tools around it, not the user's code.
_OURS = re.compile(r"^(AGENTCLI_|LITELLM_|PYTEST_|COV_CORE_)")


def scrubbed_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default: os.environ) without credentials or agentcli's own settings."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if not _SECRET.search(k) and not _OURS.match(k)}
