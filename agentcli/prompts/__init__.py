"""Every text the model is sent, as Jinja templates kept in files beside this module (grouped in
folders by kind: objections, refusals, notes, ...), so a prompt reads as prose and changes in one place.

The code decides whether a message is sent and computes its values (paths, numbers, excerpts); the
template holds the wording. A value the template uses and the caller does not give raises.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


@cache
def environment() -> Environment:
    """The templates under agentcli/prompts/: nothing escaped, block tags on lines of their own leave
    no line behind, and a template keeps its text to the last character."""
    return Environment(
        loader=PackageLoader("agentcli", "prompts"),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(name: str, /, **values: Any) -> str:
    """The template `name` (`objections/unchecked_change` for prompts/objections/unchecked_change.md)
    filled with `values`. The line end a template file ends with is no part of the text: a text that
    ends with a line end ends with an empty line in its file."""
    return environment().get_template(f"{name}.md").render(**values).removesuffix("\n")
