"""Prompt templates, kept as files beside this module so they read as prose; the agent and the context
window (its summary prompt) both render them."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def template(name: str) -> str:
    return resources.files("agentcli.prompts").joinpath(f"{name}.md").read_text()


def render(name: str, **values: str) -> str:
    """Fill `{key}` placeholders; other braces (shell, code) are left alone."""
    text = template(name)
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text.strip()
