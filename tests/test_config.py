"""Settings layered from defaults, the user's file, the repository's file, the environment and flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.errors import UsageError
from tests.test_solve import agentcli


@pytest.fixture
def layered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user-config"
    user.mkdir()
    (user / "config.toml").write_text('model = "openai/from-user"\nmax_steps = 11\ncommand_timeout = 30\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".agentcli.toml").write_text("max_steps = 22\nnetwork = true\n")
    monkeypatch.setenv("AGENTCLI_CONFIG_DIR", str(user))
    monkeypatch.setenv("AGENTCLI_COMMAND_TIMEOUT", "45")
    return repo


def test_each_layer_overrides_the_one_before(layered: Path):
    settings = load_settings(layered, {"max_steps": 33, "sandbox": None})
    assert settings.model == "openai/from-user"
    assert settings.network is True
    assert settings.command_timeout == 45.0
    assert settings.max_steps == 33
    sources = {name: source for name, _, source in settings.describe()}
    assert sources["model"].endswith("config.toml") and "user-config" in sources["model"]
    assert sources["network"].endswith(".agentcli.toml")
    assert sources["command_timeout"] == "env AGENTCLI_COMMAND_TIMEOUT"
    assert sources["max_steps"] == "flag" and sources["sandbox"] == "default"


def test_bad_values_name_their_origin(layered: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCLI_MAX_STEPS", "many")
    with pytest.raises(UsageError, match="AGENTCLI_MAX_STEPS: max_steps must be a int"):
        load_settings(layered)
    monkeypatch.delenv("AGENTCLI_MAX_STEPS")
    (layered / ".agentcli.toml").write_text("max_stepz = 3\n")
    with pytest.raises(UsageError, match="unknown setting 'max_stepz'"):
        load_settings(layered)
    (layered / ".agentcli.toml").write_text("max_steps = [\n")
    with pytest.raises(UsageError, match="invalid TOML"):
        load_settings(layered)


def test_config_show_prints_values_and_sources(layered: Path):
    result = agentcli("config", "show", cwd=layered, env={"AGENTCLI_CONFIG_DIR": str(layered.parent / "user-config")})
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "22" in lines["max_steps"] and ".agentcli.toml" in lines["max_steps"]
    assert "45" in lines["command_timeout"] and "AGENTCLI_COMMAND_TIMEOUT" in lines["command_timeout"]
