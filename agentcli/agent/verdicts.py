"""The loop's answers to a reply it does not carry out as sent, as exceptions: raised where a check or a
guard decides, caught once per step, where the model is told (`Rejected.message`) and the user shown a
short label (`FormatError.verdict`: "refused", "objection (tests)")."""

from __future__ import annotations


class Rejected(Exception):
    """A reply not carried out: `message` is what the model is sent; `about`, what the label names (a
    policy, or what went wrong); `command_ran`: the reply's command ran first, its observation stands."""

    kind = ""

    def __init__(self, message: str, about: str = "", *, command_ran: bool = False):
        super().__init__(message)
        self.message, self.about, self.command_ran = message, about, command_ran

    @property
    def label(self) -> str:
        return f"{self.kind} ({self.about})" if self.about else self.kind


class Malformed(Rejected):
    """A reply with no usable action (its label is empty: the console says "no usable command")."""


class Refused(Rejected):
    """An action a guard would not run."""

    kind = "refused"


class Objected(Rejected):
    """A DONE the checks send back: the task is not done."""

    kind = "objection"
