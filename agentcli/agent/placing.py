"""Where code goes that a reply did not put in a file: a ```python block with no path, Python echoed
line by line.

Small models write Python far more reliably than shell pipelines or here-documents, but often forget
the path line; the code goes to the one file that defines its functions, or runs as a script. Each
placement tells the model what was done and how to say it next time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agentcli.agent.edits import python_script_command
from agentcli.agent.parsing import PYTHON_LANGUAGES, ParsedReply, echoed_file, echoed_program, echoed_python
from agentcli.agent.pysource import parse
from agentcli.agent.repo_view import RepoView
from agentcli.policies import Policies
from agentcli.prompts import render

# The programs a shell command a small model puts in a ```python block starts with.
_SHELL_COMMAND = re.compile(
    r"(?:python3?|pip3?|bash|sh|cat|ls|grep|sed|awk|echo|cd|touch|mkdir|mv|cp|rm|chmod|git|head|tail|wc|find|sort)"
    r"[ \t]+\S"
)


class Placer:
    """Places a reply's unplaced code (policy `echo-as-block`)."""

    def __init__(self, repo: RepoView, policies: Policies, asked_files: Callable[[], Sequence[str]]) -> None:
        self.repo = repo
        self.policies = policies
        self.asked_files = asked_files  # the files the task asks to be written, as the session read them

    def place(self, parsed: ParsedReply) -> None:
        """Turn `parsed`'s code with no file, or its echoed code, into the write or command it means."""
        command = parsed.command if self.policies.on("echo-as-block") else None
        if parsed.code is not None:
            self._code(parsed)
        elif command is not None and (code := echoed_python(command)) is not None:
            self._echoed_code(parsed, code)
        elif command is not None and (written := echoed_file(command)) and (path := self._from_shell(written[0])):
            # The file rewritten one `echo` at a time, from memory: as a block it is spliced instead.
            parsed.command, parsed.file_write = None, (path, written[1])
            parsed.notes.append(render("notes/echo_as_block", path=path))
            self.policies.fired("echo-as-block")
        elif command is not None and (program := echoed_program(command)) is not None:
            self._echoed_program(parsed, *program)

    def _from_shell(self, path: str) -> str | None:
        """A file a shell command writes to, by its path in the repository; None where it is outside."""
        return self.repo.from_shell([path]).get(path)

    def _asked_python_file(self) -> str | None:
        """The one Python file the task asks to be written, or None (policy `asked-file`: the task's
        wording says which)."""
        fitting = [name for name in self.asked_files() if name.lower().endswith(".py")]
        return fitting[0] if len(fitting) == 1 and self.policies.on("asked-file") else None

    def _code(self, parsed: ParsedReply) -> None:
        """A Python block with no file named: an edit of the one file that defines its functions, or else
        a script to run."""
        language, block = parsed.code or ("", "")
        if language not in PYTHON_LANGUAGES:
            return
        if (home := self.repo.defining_file(block)) is not None:
            path, names = home
            parsed.file_write = path, block
            parsed.error = None
            parsed.notes.append(render("notes/block_to_defining_file", path=path, names=names))
            return
        if parsed.command is not None:
            return  # beside a command, code no file defines is an illustration, not a script to run
        if parse(block) is None and _SHELL_COMMAND.match(block.lstrip()):
            # ```python around `python -c '...'` or `cat data.json`: the command, not a script.
            parsed.command, parsed.error = block, None
            parsed.notes.append(render("notes/shell_in_python_block"))
            return
        parsed.command = python_script_command(block)
        parsed.error = None
        parsed.notes.append(render("notes/python_block_ran"))

    def _echoed_code(self, parsed: ParsedReply, code: str) -> None:
        """`echo` lines that print definitions one file of the repository has: that file's edit."""
        if (home := self.repo.defining_file(code)) is None:
            return
        path, names = home
        parsed.command, parsed.file_write = None, (path, code)
        parsed.notes.append(render("notes/echoed_code", path=path, names=names))
        self.policies.fired("echo-as-block")

    def _echoed_program(self, parsed: ParsedReply, code: str, path: str, rest: str) -> None:
        """One `echo "` printing Python code over several lines (its quotes broken by the code's own, or
        going to no file): the code written to the file it names, else to the one Python file the task
        asks for, else to the file that defines its functions; the commands after it run after."""
        if path and (path := self._from_shell(path)) is None:
            return  # a file outside the repository: the command runs as it is
        asked = None if path else self._asked_python_file()
        target = path or asked or (home[0] if (home := self.repo.defining_file(code)) else None)
        if target is None:
            return
        if asked:
            self.policies.fired("asked-file")
        parsed.command, parsed.file_write = rest or None, (target, code)
        parsed.notes.append(render("notes/echoed_program", path=target))
        self.policies.fired("echo-as-block")
