"""What the agent reads of the repository through the sandbox: files, listings, definitions.

Everything here runs in the sandbox or reads through it; the host never reads the work tree directly.
"""

from __future__ import annotations

import posixpath
import shlex

from agentcli.agent import edits
from agentcli.agent.edits import defined_names, definition_search
from agentcli.agent.tracebacks import definition_range, is_test_file
from agentcli.sandbox.base import Observation, Sandbox, shell_paths

# Lines of a function under test shown beside a failing assertion, at most.
MAX_SHOWN_DEFINITION = 40


class RepoView:
    """The repository as the sandbox sees it."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def read(self, path: str) -> str | None:
        """The text of `path`; None where it is not there, is a folder or cannot be read as text."""
        try:
            return self.sandbox.read_file(path)
        except (OSError, UnicodeDecodeError):
            return None

    def from_shell(self, paths: list[str]) -> dict[str, str]:
        """Paths a shell command names (relative to where the model's shell is) as paths relative to the
        repository, each by the path as the command names it; those outside the repository left out."""
        return {
            path: found
            for path, found in zip(paths, shell_paths(self.sandbox, paths) if paths else [], strict=True)
            if found is not None and found != "."
        }

    def shell_folder(self) -> str | None:
        """The folder the model's shell is in, relative to the repository ("." at its root); None outside it."""
        return shell_paths(self.sandbox, ["."])[0]

    def write_command(self, path: str, content: str, shell_folder: str | None = ".") -> str:
        """The command that writes `content` to `path` (relative to the repository) from the shell's
        `shell_folder` (`shell_folder()`)."""
        if shell_folder != "." and not posixpath.isabs(path):
            path = posixpath.join(self.sandbox.workdir, path)
        return edits.write_command(path, content)

    def run_at_root(self, command: str, timeout: float | None = None) -> Observation:
        """Run `command` in a subshell at the repository root: the model's shell keeps its directory."""
        return self.sandbox.run(f"(cd {shlex.quote(self.sandbox.workdir)} && {command}\n)", timeout)

    def listed_files(self, command: str, *, hidden: bool = False) -> list[str]:
        """The files a listing command (`grep -l`, printing `./path` lines) names; hidden paths (.git,
        .agentcli, dotfiles) only with `hidden`."""
        listing = self.run_at_root(command).output.splitlines()
        files = sorted({line.strip().removeprefix("./") for line in listing if line.strip()})
        return [f for f in files if hidden or not f.startswith(".")]

    def defining_file(self, code: str) -> tuple[str, str] | None:
        """The one file of the repository that defines the functions and classes of `code`, and their
        names as a phrase; None when no file, or more than one, does."""
        names = defined_names(code)
        files = self.listed_files(definition_search(names)) if names else []
        return (files[0], ", ".join(names)) if len(files) == 1 else None

    def definition(self, name: str) -> tuple[str, str, tuple[int, int]] | None:
        """(file, its text, line range) of the one definition of `name` outside tests, if short enough to show."""
        files = {f for f in self.listed_files(definition_search([name])) if not is_test_file(f)}
        if len(files) != 1:
            return None
        where = files.pop()
        source = self.read(where) or ""
        span = definition_range(source, name)
        if span is None or span[1] - span[0] >= MAX_SHOWN_DEFINITION:
            return None
        return where, source, span

    def replace_literally(self, path: str, text: str, old: str, new: str, every: bool) -> bool:
        """Write `text` with `old` replaced by `new` to `path`: everywhere (`every`), or as sed without
        `g` does, the first on each line. Whether the write succeeded."""
        if every:
            replaced = text.replace(old, new)
        else:
            replaced = "".join(line.replace(old, new, 1) for line in text.splitlines(keepends=True))
        return self.sandbox.run(self.write_command(path, replaced, self.shell_folder())).ok
