"""Approval modes: which commands run at once and which wait for the user's yes.

- `suggest`: every command and edit asks (the default with the host sandbox);
- `auto-edit`: file edits inside the workspace run, other commands ask (the default in a real sandbox);
- `full-auto`: nothing asks.

An answer of "always" lets commands of the same kind run without asking for the rest of the session:
file edits, or commands made of the same programs (`python3`, `git`, `grep | wc`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.agent.outcome import Decision
from agentcli.errors import UsageError
from agentcli.prompts import render
from agentcli.ui.edits import CommandKind, classify

MODES = ("suggest", "auto-edit", "full-auto")
YES, NO, EDIT, ALWAYS = "yes", "no", "edit", "always"


def default_mode(backend: str) -> str:
    """Ask for everything when commands touch the host; let edits through in a real sandbox."""
    return "suggest" if backend == "host" else "auto-edit"


def parse_mode(text: str) -> str:
    name = text.strip().lower().replace("_", "-")
    if name in ("auto", "autoedit"):
        name = "auto-edit"
    if name in ("full", "fullauto", "yolo"):
        name = "full-auto"
    if name not in MODES:
        close = difflib.get_close_matches(name, MODES, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(f"unknown approval mode {text!r}{hint}: use {', '.join(MODES)}")
    return name


@dataclass
class Answer:
    """What the user chose at an approval prompt."""

    choice: str  # yes | no | edit | always
    text: str = ""  # the edited command, or the reason for a no


Asker = Callable[[str, CommandKind], Answer]


@dataclass
class Approvals:
    """The loop's approval hook: classifies each command, and asks only when the mode says so.

    `inside(path)` tells whether a path, as the command names it, is inside the workspace.
    """

    mode: str
    inside: Callable[[str], bool]
    ask: Asker
    always: set[object] = field(default_factory=set)

    def needs_asking(self, kind: CommandKind) -> bool:
        if self.mode == "full-auto":
            return False
        if kind.edit and (self.mode == "auto-edit" or "edit" in self.always):
            return False
        return kind.programs is None or kind.programs not in self.always

    def __call__(self, command: str) -> Decision:
        if self.mode == "full-auto":
            return Decision()
        kind = classify(command, self.inside)
        if not self.needs_asking(kind):
            return Decision()
        answer = self.ask(command, kind)
        if answer.choice == ALWAYS:
            self.always.add("edit" if kind.edit else kind.programs)
            return Decision()
        if answer.choice == EDIT:
            edited = answer.text.strip()
            if not edited:
                return Decision(run=False, message=render("user/removed"))
            return Decision(command=edited)
        if answer.choice == NO:
            return Decision(run=False, message=render("user/declined", said=answer.text.strip(), advice=True))
        return Decision()
