"""Outcome checks for deep-merge-json."""

import json
import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
EXPECTED = {
    "app": {"name": "tracker", "debug": True, "workers": 4},
    "database": {
        "host": "db.dev.internal",
        "port": 5432,
        "pool": {"min": 1, "max": 20, "timeout": 30},
    },
    "features": ["search"],
    "logging": {"level": "INFO", "file": None},
    "cache": {"backend": "memory", "ttl": 300},
    "sentry": {"dsn": "https://key@sentry.example/1"},
}


def test_merged_config():
    path = WORKDIR / "config" / "merged.json"
    assert path.is_file()
    assert json.loads(path.read_text()) == EXPECTED


def test_inputs_unchanged():
    defaults = json.loads((WORKDIR / "config" / "defaults.json").read_text())
    local = json.loads((WORKDIR / "config" / "local.json").read_text())
    assert defaults["database"]["pool"] == {"min": 1, "max": 10, "timeout": 30}
    assert local == {
        "app": {"debug": True},
        "database": {"host": "db.dev.internal", "pool": {"max": 20}},
        "features": ["search"],
        "logging": {"file": None},
        "sentry": {"dsn": "https://key@sentry.example/1"},
    }
