"""Guards around the model's own shell commands: what must not run, what it lost that comes back,
failures that are none, and the way past failures small models are stuck at.

Small models write `>` for `>>`, append a line that breaks a Python file, filter a file into itself,
take git's "nothing to commit" for a failure to fix, and try to install packages again and again where
there is no network. Each guard says what it did, so the model learns the better way from its own command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from agentcli.agent.checking import appended_files, overwrites, simple_commands
from agentcli.agent.edits import overwrite_loss
from agentcli.agent.pysource import syntax_error
from agentcli.policies import Policies
from agentcli.prompts import render
from agentcli.sandbox.base import Observation, Sandbox, shell_paths

# `git commit` with nothing left to commit: the commit the task wants is made already.
_COMMIT = re.compile(r"\bgit\b.*\bcommit\b")
NOTHING_TO_COMMIT = "nothing to commit, working tree clean"
# A program that serves until stopped: run in the foreground, it never ends on its own.
_SERVES = re.compile(
    r"\.serve_forever\(|\bHTTPServer\(|\buvicorn\.run\(|\bapp\.run\(|\bweb\.run_app\(|\.listen\(\s*(?:\d|port|PORT)"
)
_RUNS_FILE = re.compile(
    r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:python3?|node)\s+((?:\./)?[\w./-]+\.(?:py|js|mjs))\s*(?:\s[^;&|<>]*)?$"
)


# Installing a package, and the output of an install that found no network.
_INSTALL = re.compile(
    r"^\s*(?:sudo\s+)?(?:pip3?|python3?\s+-m\s+pip|apt(?:-get)?|npm|yarn|conda|gem|cargo)\s+(?:install|add)\b",
    re.MULTILINE,
)
_OFFLINE = re.compile(
    r"Temporary failure in name resolution|Failed to establish a new connection|Could not resolve host"
    r"|Network is unreachable|No matching distribution found|Could not connect"
)
# `echo "import pytest` and lines of code after it: a file's content quoted for the shell.
_ECHOED_TEXT = re.compile(r"^\s*(?:echo|printf)(?:\s+-\w+)*\s+[\"'][^\n]*\n", re.MULTILINE)
# What `overwritten` records of each file a command writes over: the writing program (`>>` for an
# append), the text before.
# By path in the repository: the program, the file's text before, its path as the command names it.
Overwritten = dict[str, tuple[str, str | None, str]]


class CommandGuards:
    """The guards for one sandbox; `read` gives a file's text, or None where there is none."""

    def __init__(self, sandbox: Sandbox, read: Callable[[str], str | None], policies: Policies | None = None):
        self.sandbox = sandbox
        self.read = read
        self.policies = policies or Policies.every()
        self.offline = False  # an install has failed for want of a network

    def refusal(self, command: str) -> str | None:
        """Why `command` may not run: it installs a package after an install found no network (small
        models try again and again); None where it may."""
        if self.offline and _INSTALL.search(command):
            self.policies.fired("offline-install")
            return render("notes/no_network", not_run=True)
        return None

    def server(self, command: str) -> str | None:
        """The repository program a simple command of `command` (a line of its own, a part after `&&`)
        runs in the foreground when it is a server (`python3 server.py` over `serve_forever()`), or None."""
        if not self.policies.on("server-stop"):
            return None
        for part in simple_commands(command):
            match = _RUNS_FILE.match(part.strip())
            if match is None:
                continue
            path = match.group(1).removeprefix("./")
            text = self.read(path)
            if text is not None and _SERVES.search(text):
                self.policies.fired("server-stop")
                return path
        return None

    def failure_advice(self, obs: Observation) -> str | None:
        """The exact way past a failure small models do not know how to get past, or None: a script
        that may not run, an install that cannot download (after which no install runs again), code
        echoed in quotes that do not close."""
        if _INSTALL.search(obs.command) and _OFFLINE.search(obs.output) and self.policies.on("offline-install"):
            self.offline = True
            self.policies.fired("offline-install")
            return render("notes/no_network", not_run=False)
        if not self.policies.on("failure-advice"):
            return None
        return self.policies.fired_if("failure-advice", self._advice(obs))

    def _advice(self, obs: Observation) -> str | None:
        if obs.syntax_error and _ECHOED_TEXT.search(obs.command):
            return render("notes/unclosed_echo")
        denied = _NOT_EXECUTABLE.search(obs.output) if obs.exit_code == 126 else None
        # Without an interpreter line, a script run directly is read by the shell: `import: command not found`.
        misread = None if denied else _READ_BY_SHELL.search(obs.output)
        found = denied or misread
        if found is None:
            return None
        path = found.group(1).removeprefix("./")
        (where,) = shell_paths(self.sandbox, [path])  # the shell named it from where it is
        text = self.read(where) if where is not None and where != "." else None
        if text is None:
            return None
        line = INTERPRETER_LINES.get("." + path.rsplit(".", 1)[-1]) if "." in path else None
        lacks_line = line if line and not text.startswith("#!") else None
        if not denied and not lacks_line:
            return None
        # What is missing, not the commands that add it: those would be the task's solution.
        return render("notes/script_cannot_run", path=path, not_executable=bool(denied), interpreter_line=lacks_line)

    def before_overwrites(self, command: str) -> Overwritten:
        """What each file `command` writes over with `>`, or adds to with `>>`, holds now, for
        `undo_lossy_overwrites`; by its path in the repository (the command's are from where the shell is)."""
        named = {path: ">>" for path in appended_files(command)} | dict(overwrites(command))
        found = shell_paths(self.sandbox, list(named)) if named else []
        return {
            path: (program, self.read(path), name)
            for (name, program), path in zip(named.items(), found, strict=True)
            if path is not None and path != "."
        }

    def undo_lossy_overwrites(self, command: str, before: Overwritten) -> list[str]:
        """Put back each file a `>` of `command` wrote over and so lost what it held, and each settings
        file a `>>` gave a second line for a key it sets; a note for each."""
        notes = []
        for path, (program, old, name) in before.items():
            new = self.read(path)
            if old is None or new is None:
                continue
            if program == ">>":
                if self.policies.on("broken-append") and (broken := _broken_by_append(name, old, new)):
                    self.sandbox.write_file(path, old)
                    notes.append(broken)
                    self.policies.fired("broken-append")
                continue
            if not self.policies.on("lossy-overwrite") or (loss := overwrite_loss(old, new, program)) is None:
                continue
            self.sandbox.write_file(path, old)
            self.policies.fired("lossy-overwrite")
            # Told as the command named it: the advice is commands to run from where the shell is.
            emptied = name in command.split(">", 1)[0] and not new.strip()
            notes.append(
                render(
                    "notes/overwrite_put_back",
                    path=name,
                    block_path=path,
                    loss=loss,
                    program=program,
                    emptied_before_read=emptied,
                    **_line_placement(name, new),
                )
            )
        return notes


def _broken_by_append(path: str, old: str, new: str) -> str | None:
    """The note when lines added to the end of a Python file that parsed leave it unparsable (`echo
    "timeout" >> settings.py` parses, `echo "def dsn(settings, timeout):" >> db.py` does not), for the
    file put back as it was; None otherwise."""
    if not path.endswith(".py") or syntax_error(old) is not None or (error := syntax_error(new)) is None:
        return None
    return render("notes/broken_append", path=path, error=error.msg, line=error.lineno)


def already_done(command: str, obs: Observation) -> str | None:
    """A note when a failing command only says its work is done already (so it is no failure), else None."""
    if obs.exit_code == 1 and _COMMIT.search(command) and NOTHING_TO_COMMIT in obs.output:
        return render("notes/nothing_to_commit")
    return None


# `bash: ./scripts/run.py: Permission denied` (exit 126): a script run directly that may not be.
_READ_BY_SHELL = re.compile(r"^((?:\./)?[\w./-]+\.py): line \d+: (?:import|from): command not found$", re.MULTILINE)
_NOT_EXECUTABLE = re.compile(r"^(?:bash: )?(?:line \d+: )?((?:\./)?[\w./-]+): Permission denied$", re.MULTILINE)
INTERPRETER_LINES = {".py": "#!/usr/bin/env python3", ".sh": "#!/usr/bin/env bash", ".bash": "#!/usr/bin/env bash"}


def _line_placement(path: str, written: str) -> dict[str, str | None]:
    """The one line an overwrite wrote, and the commands that add it at the top and at the end of
    `path` (an interpreter line works only as the first line); None for each where it wrote more."""
    lines = written.splitlines()
    if len(lines) != 1 or not lines[0].strip():
        return {"line": None, "at_top": None, "at_end": None}
    line = lines[0]
    top = f"`sed -i {shlex.quote('1i ' + line.replace(chr(92), chr(92) * 2))} {shlex.quote(path)}`"
    end = f"`echo {shlex.quote(line)} >> {shlex.quote(path)}`"
    return {"line": line, "at_top": top, "at_end": end}
