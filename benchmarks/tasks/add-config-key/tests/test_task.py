"""Outcome checks for add-config-key."""

import importlib
import json
import os
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
sys.dont_write_bytecode = True


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


def write(tmp_path, data):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_default_timeout():
    assert load("settings").load_settings(None)["timeout"] == 30


def test_timeout_from_file(tmp_path):
    settings = load("settings").load_settings(write(tmp_path, {"timeout": 5, "host": "db"}))
    assert settings["timeout"] == 5
    assert settings["host"] == "db"


def test_dsn_with_default_timeout():
    settings = load("settings").load_settings(None)
    assert load("db").dsn(settings) == "postgresql://app@localhost:5432/app?connect_timeout=30"


def test_dsn_with_timeout_from_file(tmp_path):
    settings = load("settings").load_settings(write(tmp_path, {"timeout": 7, "user": "ro", "port": 6543}))
    assert load("db").dsn(settings) == "postgresql://ro@localhost:6543/app?connect_timeout=7"


def test_unknown_keys_still_rejected(tmp_path):
    with pytest.raises(ValueError):
        load("settings").load_settings(write(tmp_path, {"timeuot": 5}))
