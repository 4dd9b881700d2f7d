"""A deterministic digest of folded steps: commands, exit codes, files touched, errors still open.

It needs no model, so it cannot fail; it is the summary when the summary model errors or rambles.
It accumulates over every compaction, so it always covers all folded steps, not just the last chunk.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.models.base import Message
from agentcli.prompts import render

# What a reply proposes, as the agent's reply protocol reads it: its command (None: none), and whether
# it says the task is finished. The agent supplies it; the context knows no reply format of its own.
ReplyReader = Callable[[str], tuple[str | None, bool]]


def no_command(text: str) -> tuple[str | None, bool]:
    """The reader of a window no agent has set one for: every reply is shown as its text."""
    return None, False


_HEADER = re.compile(r"^\[(?:exit (-?\d+)|(timed out)|(syntax error)|(no command ran))", re.MULTILINE)
_REDIRECT = re.compile(r"(?<![0-9&])>{1,2}\s*([^\s;&|<>()]+)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_STRONG_ERROR = re.compile(r"error|exception|not found|no such|denied|cannot|fatal", re.IGNORECASE)
_WEAK_ERROR = re.compile(r"fail|warning|traceback", re.IGNORECASE)
_WRITERS = {"touch", "mkdir", "rm", "tee", "cp", "mv", "chmod", "ln", "truncate"}
_MAX_COMMAND = 160


@dataclass
class Step:
    number: int
    command: str | None
    exit_code: int | None  # None: did not run or no observation seen
    status: str  # "exit N" | "timed out" | "syntax error" | "no command" | "finished"
    first_error: str = ""


@dataclass
class Digest:
    """What every folded step did, in a form that survives any number of compactions."""

    steps: list[Step] = field(default_factory=list)
    files: dict[str, None] = field(default_factory=dict)  # ordered set
    open_errors: dict[str, str] = field(default_factory=dict)  # command -> first error line

    @classmethod
    def from_dict(cls, data: dict) -> Digest:
        """The digest `dataclasses.asdict` wrote (a journaled window state)."""
        return cls(
            steps=[Step(**step) for step in data.get("steps", [])],
            files=dict.fromkeys(data.get("files", {})),
            open_errors=dict(data.get("open_errors", {})),
        )

    def add(self, messages: list[Message], first_step: int, read_reply: ReplyReader = no_command) -> int:
        """Record folded messages; returns the number of steps (assistant messages) among them."""
        number = first_step - 1
        current: Step | None = None
        for message in messages:
            if message["role"] == "assistant":
                number += 1
                current = self._from_reply(number, *read_reply(message["content"]))
                self.steps.append(current)
            elif current is not None and current.exit_code is None and current.command is not None:
                self._observe(current, message["content"])
        return number - first_step + 1

    def _from_reply(self, number: int, command: str | None, finished: bool) -> Step:
        if finished and command is None:
            return Step(number, None, None, "finished")
        if command is None:
            return Step(number, None, None, "no command")
        command = command.strip()
        for path in files_written(command):
            self.files[path] = None
        return Step(number, command, None, "no output seen")

    def _observe(self, step: Step, text: str) -> None:
        match = _HEADER.search(text)
        if match is None:
            return
        if match.group(1) is not None:
            step.exit_code = int(match.group(1))
            step.status = f"exit {step.exit_code}"
        else:
            step.exit_code = -1
            step.status = next(g for g in match.groups()[1:] if g)
        key = step.command or ""
        if step.exit_code == 0:
            self.open_errors.pop(key, None)
        else:
            newline = text.find("\n", match.start())
            body = text[newline + 1 :] if newline >= 0 else ""
            lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith("[")]
            strong = [ln for ln in lines if _STRONG_ERROR.search(ln)]
            weak = [ln for ln in lines if _WEAK_ERROR.search(ln)]
            step.first_error = (strong or weak or lines[-1:] or [""])[-1]
            self.open_errors[key] = step.first_error[:200]

    def render(self, fits: Callable[[str], bool]) -> str:
        """The digest as text; older commands are dropped until `fits(text)` says it fits."""
        keep = len(self.steps)
        while True:
            text = self._text(keep)
            if fits(text) or keep == 0:
                break
            keep = keep // 2 if keep > 8 else keep - 1
        if not fits(text):
            text = self._text(0, files=8, errors=2)
        return text

    def _text(self, keep: int, files: int = 40, errors: int = 6) -> str:
        shown = self.steps[len(self.steps) - keep :] if keep else []
        paths = list(self.files)
        return render(
            "context/digest",
            omitted=len(self.steps) - len(shown),
            steps=[
                {"number": s.number, "command": _one_line(s.command) if s.command else "-", "status": s.status}
                for s in shown
            ],
            files=paths[-files:],
            more_files=max(0, len(paths) - files),
            errors=[(_one_line(command), error) for command, error in list(self.open_errors.items())[-errors:]],
        )


def _one_line(command: str) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    if "\n" in command.strip():
        first += " …"
    return first if len(first) <= _MAX_COMMAND else first[: _MAX_COMMAND - 1] + "…"


def files_written(command: str) -> list[str]:
    """Paths a shell command probably writes: redirect targets, `sed -i` files, tee/touch/mv/cp targets."""
    found: list[str] = []
    for line in _without_heredocs(command):
        found += [p for p in _REDIRECT.findall(line) if not p.startswith("/dev/") and not p.startswith("&")]
        for segment in re.split(r"&&|\|\||;|\|", line):
            try:
                words = shlex.split(segment)
            except ValueError:
                continue
            if not words:
                continue
            args = [w for w in words[1:] if not w.startswith(("-", "+")) and "<" not in w and ">" not in w]
            head = words[0]
            if head == "sed" and any(w == "-i" or w.startswith("-i") for w in words[1:]):
                found += args[1:]
            elif head in ("cp", "mv", "ln") and len(args) >= 2:
                found.append(args[-1])
            elif head in _WRITERS and head not in ("cp", "mv", "ln"):
                found += args
    return [p for p in dict.fromkeys(found) if "<<" not in p and "EOF" not in p and not p.startswith("$")]


def _without_heredocs(command: str) -> list[str]:
    """The command's lines with here-document bodies left out (they are data, not commands)."""
    lines: list[str] = []
    delimiter: str | None = None
    for line in command.splitlines():
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        lines.append(line)
        match = _HEREDOC.search(line)
        if match:
            delimiter = match.group(1)
    return lines
