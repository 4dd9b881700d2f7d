"""What a guard that reads the task's wording looks like to `CommandGuards`: the policy that switches it,
and its hooks on a command before it runs, each optional. Such guards are fitted to phrasings, so each
lives in a module of its own beside this one, to be measured and removed one at a time."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

# A file's text, or None where there is none.
Read = Callable[[str], str | None]
# Why a command may not run; None where this guard lets it.
Refuse = Callable[[str, str, Read], str | None]
# The command that puts the change where the task wants it (None where there is none to give) and why;
# None where this guard has nothing to say of the command.
Place = Callable[[str, str, Read], tuple[str | None, str] | None]

# A path the task names, and its suffix.
NAMED_PATH = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-][\w.-]*\.(\w+))(?![\w/-])")


@dataclass(frozen=True)
class TaskGuard:
    policy: str
    refuse: Refuse | None = None
    place: Place | None = None


def unquoted(words: str) -> str:
    """`words` as the shell reads them, quotes removed (as written where they do not parse)."""
    try:
        return " ".join(shlex.split(words))
    except ValueError:
        return words
