"""Settings: built-in defaults, overridden by an optional JSON file."""

import json
import os

DEFAULTS = {
    "host": "localhost",
    "port": 5432,
    "user": "app",
    "database": "app",
}


def load_settings(path: str | None = None) -> dict:
    """Defaults updated with the JSON object in `path`, if that file exists.

    Unknown keys in the file are an error, so typos do not go unnoticed.
    """
    settings = dict(DEFAULTS)
    if path is not None and os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
        unknown = sorted(set(data) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        settings.update(data)
    return settings
