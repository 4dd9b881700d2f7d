"""The scripts a task asks for, and whether each has run since it last changed (policy `unrun`).

A small model writes `find "$1" -name '*.py' | wc -l` for "the total number of lines" and says it is
done without ever running it: a DONE while such a script has not run since it changed is objected to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agentcli.agent.checking import SCRIPT_SUFFIXES, SHELL_AND_PYTHON_SCRIPTS, runs_script
from agentcli.agent.tracebacks import is_test_file
from agentcli.prompts import render


class UnrunScripts:
    """For each script the task asks for (tests aside: their runner runs them), its text when last seen
    and whether it has run since; `read` gives a file's text, or None."""

    def __init__(self, asked_files: Iterable[str], read: Callable[[str], str | None]):
        self.read = read
        scripts = [name for name in asked_files if name.endswith(SHELL_AND_PYTHON_SCRIPTS) and not is_test_file(name)]
        self.seen: dict[str, tuple[str | None, bool]] = {name: (read(name), True) for name in scripts}

    def after(self, command: str) -> None:
        """After a command: which scripts changed, and which ran, since."""
        for path, (text, ran) in self.seen.items():
            now = self.read(path)
            if now is not None and now != text:
                ran = runs_script(command, path)  # written and run in one command counts as run
            elif now is not None and runs_script(command, path):
                ran = True
            self.seen[path] = (now, ran)

    def objection(self) -> str | None:
        """What a DONE is told while a script has not run since it last changed, or None."""
        for path, (text, ran) in self.seen.items():
            if not ran and text and text.strip():  # an empty one is objected to as empty
                run = f"bash {path}" if path.endswith(SCRIPT_SUFFIXES["bash"]) else f"python3 {path}"
                # Its size in the words: each version of the script is objected to once.
                lines = text.count("\n") + (not text.endswith("\n"))
                return render("objections/unrun_script", path=path, lines=lines, run=run)
        return None
