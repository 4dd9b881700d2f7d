"""Every text the model is sent, as Jinja templates kept in files beside this module (grouped in
folders by kind: objections, refusals, notes, ...), so a prompt reads as prose and changes in one place.

The code decides whether a message is sent and computes its values (paths, numbers, excerpts); the
template holds the wording. A value the template uses and the caller does not give raises.

Per model family, `families/FAMILY/NAME.md` replaces `NAME.md`; a folder of the user's own (the
`prompts` setting, never from an untrusted repository file, never a folder inside the work tree: the
sandbox could write a template there) replaces built-in templates of the same name. One process
drives one model, so the choice is made once, by the session (`choose`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined

# The user's folder of templates (None: only the built-in ones) and the model family.
_chosen: tuple[Path | None, str] = (None, "")


def choose(folder: Path | None = None, family: str = "") -> None:
    """Render from `folder`'s templates before the built-in ones, and `family`'s before the general ones."""
    global _chosen
    _chosen = (folder, family)
    environment.cache_clear()


def family_of(model_name: str) -> str:
    """A model's family from its name: `local/qwen2.5-coder-1.5b` → `qwen`, `openai/gpt-4o` → `gpt`."""
    match = re.match(r"[a-z]+", model_name.rsplit("/", 1)[-1].lower())
    return match.group(0) if match else ""


@cache
def environment() -> Environment:
    """The templates under agentcli/prompts/ (the user's folder first): nothing escaped, block tags on
    lines of their own leave no line behind, and a template keeps its text to the last character."""
    folder = _chosen[0]
    own = [FileSystemLoader(str(folder))] if folder is not None else []
    return Environment(
        loader=ChoiceLoader([*own, PackageLoader("agentcli", "prompts")]),
        auto_reload=False,  # a template is read once, when first used
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
    family = _chosen[1]
    names = [f"families/{family}/{name}.md", f"{name}.md"] if family else [f"{name}.md"]
    return environment().select_template(names).render(**values).removesuffix("\n")
