"""Guards around the model's own shell commands: what must not run, what a command needs made first,
what it lost that comes back, failures that are none, and the way past failures small models are stuck at.

Small models delete the file a task is about, redirect into folders that do not exist, write `>` for
`>>` and `>>` for a change of a setting, filter a file into itself, take git's "nothing to commit"
for a failure to fix, and try to install packages again and again where there is no network. Each
guard says what it did, so the model learns the better way from its own command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from agentcli.agent.checking import appended_files, overwrites, redirected_files, removed_files, simple_commands
from agentcli.agent.edits import duplicated_setting, overwrite_loss, sed_targets, without_comment_lines
from agentcli.agent.pysource import syntax_error
from agentcli.policies import Policies
from agentcli.prompts import render
from agentcli.sandbox.base import Observation, Sandbox

# What says a file goes without a verb for it: "old_utils.py is obsolete".
_GOES = re.compile(r"\b(?:obsolete|unused|no longer (?:used|needed)|dead code|deprecated|stale|leftover)\b", re.I)
# Words of a task that asks for a tracked file to stay on disk.
_STOP_TRACKING = re.compile(r"\b(?:stop tracking|untrack|no longer track)", re.IGNORECASE)
# A verb that asks for a file to go: its object within the clause is a file the task deletes.
_DELETES = r"\b(?:delete|remove|rm|erase|drop|replace|rename|move|get rid of)\b[^.;,]*?"
# `git commit` with nothing left to commit: the commit the task wants is made already.
_COMMIT = re.compile(r"\bgit\b.*\bcommit\b")
NOTHING_TO_COMMIT = "nothing to commit, working tree clean"
# "without changing test_shapes.py", "do not edit config.yaml", "(the CSV file is correct as it is)":
# files the task says to leave as they are, named or by their kind.
# A path, not the start of a possessive ("main.py's public API" leaves main.py's API, not the file, alone).
_PATH_WORD = r"`?((?:[\w-]+/)*[\w.-]+\.\w+)(?!['’]\w|\w)`?"
_LEAVE_NAMED = re.compile(
    rf"\b(?:without (?:changing|modifying|editing|touching)|do(?:n't| not) (?:change|modify|edit|touch))\s+{_PATH_WORD}"
    # the file itself: not "without changing cli.py behaviour", "don't touch x.py except to ..."
    r"(?!\s+(?:behaviou?r|api|public|interface|output|format|logic|semantics|signature|except|other than"
    r"|apart from|beyond)\b)"
    rf"|{_PATH_WORD}\s+is (?:correct|right|fine) as it is\b",  # not "calc.py is correct for ints, but ..."
    re.IGNORECASE,
)
_LEAVE_KIND = re.compile(r"\bthe (\w+) file is (?:correct|right|fine)\b", re.IGNORECASE)
_NAMED_PATH = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-][\w.-]*\.(\w+))(?![\w/-])")


def files_to_keep(task: str) -> set[str]:
    """The files the task says to leave as they are: named ("without changing test_shapes.py"), or
    by kind ("the CSV file is correct as it is": the .csv files the task names)."""
    kept = {name for match in _LEAVE_NAMED.finditer(task) for name in match.groups() if name}
    for kind in _LEAVE_KIND.findall(task):
        kept |= {path for path, suffix in _NAMED_PATH.findall(task) if suffix.lower() == kind.lower()}
    return {name.removeprefix("./") for name in kept}


# "bump the version from 1.4.2 to 1.5.0": the old version stays in the history of releases.
_VERSION_BUMP = re.compile(r"\bfrom\s+`?v?(\d+(?:\.\d+)+)`?\s+to\s+`?v?\d+(?:\.\d+)+", re.IGNORECASE)
_HISTORY_FILE = re.compile(r"(?:^|/)(?:change(?:s|log)|history|news|releases?)(?:\.\w+)?$", re.IGNORECASE)
# "add a heading at the top of the changelog": an append puts it at the end.
_AT_TOP = re.compile(r"\b(?:at|to) the (?:top|beginning|start)\b|\bprepend", re.IGNORECASE)
_NOT_A_FILE = frozenset({"file", "it", "this", "that", "script", "module", "page", "document"})
_TOP_OF = re.compile(r"\b(?:of|in|to)\s+(?:the\s+)?`?([\w.-]+?)`?(?=[\s.,;:]|$)", re.IGNORECASE)
_LAST_NAMED = re.compile(r"(?:^|\s)`?([\w-]*\.?[\w-]+\.\w+|[A-Z][\w-]+)`?(?!.*\s`?[\w-]+\.\w+)", re.DOTALL)
_CLAUSE_END = re.compile(r"[,;]|\.(?:\s|$)|\band\b|\bthen\b")


def _wanted_at_top(path: str, task: str) -> bool:
    """Whether the task asks for something at the top of `path`: named (its name or stem, "the
    changelog" for CHANGELOG.md) in the clause that says "at the top"."""
    name = path.rsplit("/", 1)[-1].lower()
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    for match in _AT_TOP.finditer(task):
        # The file "at the top of" names comes right after it; else the one before it in the clause.
        after = _CLAUSE_END.split(task[match.end() :], maxsplit=1)[0]
        before = _CLAUSE_END.split(task[: match.start()])[-1]
        candidates = [m.group(1).lower() for m in (_TOP_OF.search(after), _LAST_NAMED.search(before)) if m]
        files = [word for word in candidates if word not in _NOT_A_FILE]
        if files and files[0] in (name, stem):
            return True
        # "In notes.md, add a title at the top of the file": the one file the task names.
        if not files and {named.rsplit("/", 1)[-1].lower() for named, _ in _NAMED_PATH.findall(task)} == {name}:
            return True
    return False


_ECHO_APPEND = re.compile(r"^\s*(?:echo|printf)\s+(?:-e\s+)?(\S.*?)\s*>>\s*\S+\s*$")


def without_history(command: str, task: str) -> tuple[str | None, str] | None:
    """A version bump's `sed -i` over the changelog, whose old version is the history of that release:
    the same `sed` without it (None where it edits nothing else), and why; None for other commands."""
    bump = _VERSION_BUMP.search(task)
    targets = sed_targets(command)
    history = [path for path in targets if _HISTORY_FILE.search(path)]
    if bump is None or not history or bump.group(1) not in command:
        return None
    why = render("placement/version_history", path=history[0], version=bump.group(1))
    if len(history) == len(targets):
        return None, why
    sed = shlex.split(without_comment_lines(command))
    return shlex.join(word for word in sed if word not in history), why


def at_top(command: str, task: str, read: Callable[[str], str | None]) -> tuple[str | None, str] | None:
    """An append where the task wants the text at the top: the `sed` that inserts it there (above the
    first heading of its level in Markdown, a changelog's newest entry; else above line 1), None
    where the appended text is not one echoed line, and why; None for other commands."""
    appended = appended_files(command)
    if len(appended) != 1 or not _wanted_at_top(appended[0], task) or (text := read(appended[0])) is None:
        return None
    path = appended[0]
    appending = without_comment_lines(command).strip()
    echoed = _ECHO_APPEND.match(appending) if "\n" not in appending else None
    why = render("placement/at_top", path=path, quoted_path=shlex.quote(path), no_command=echoed is None)
    if echoed is None:
        return None, why
    line = _unquoted(echoed.group(1))
    number = 2 if text.startswith("#!") else 1  # an interpreter line stays the first
    if level := re.match(r"#+ ", line):
        number = next((i for i, old in enumerate(text.splitlines(), 1) if old.startswith(level.group(0))), 1)
    return f"sed -i {shlex.quote(f'{number}i {line}')} {shlex.quote(path)}", why


_GIT_RM = re.compile(r"\bgit\s+rm\b(?![^\n]*--cached)")
_PLAIN_RM = re.compile(r"(?:^|[;&|]\s*|\n\s*)rm\s")


def kept_on_disk(command: str, task: str) -> tuple[str, str] | None:
    """`git rm` of a file the task names and says to keep (told to stop tracking it, small
    models delete it): the same command with `git rm --cached`, which keeps the file, and why."""
    if not _GIT_RM.search(command) or _PLAIN_RM.search(_GIT_RM.sub("", command)):
        return None
    kept = _named_deletion(command, task)
    if kept is None:
        return None
    why = render("placement/untracked_instead", why=kept[1])
    return _GIT_RM.sub("git rm --cached", command), why


def _named_deletion(command: str, task: str) -> tuple[str, str] | None:
    """A file `command` deletes that the task names and says to keep (or to stop tracking), or names
    with nothing saying it goes, and why it stays; None otherwise. Replacing a file, or dropping an
    obsolete one, is a deletion the task asks for in other words."""
    for path in removed_files(command):
        name = path.rstrip("/").removeprefix("./")
        named = rf"(?<![\w./-])`?{re.escape(name)}`?(?![\w/-])"
        if not name or not re.search(named, task):
            continue
        # "keep it", "keep the file", "keep debug.log": the keeping is said of this file.
        keep = re.search(rf"\bkeep\s+(?:it|them|the files?|(?:the\s+)?{named})", task, re.IGNORECASE)
        if keep or _STOP_TRACKING.search(task):
            return name, render("placement/named_file_stays", name=name, said_to_keep=True)
        if not re.search(_DELETES + named, task, re.IGNORECASE) and not _GOES.search(task):
            # The file the task is about.
            return name, render("placement/named_file_stays", name=name, said_to_keep=False)
    return None


def _unquoted(words: str) -> str:
    try:
        return " ".join(shlex.split(words))
    except ValueError:
        return words


# A program that serves until stopped: run in the foreground, it never ends on its own.
_SERVES = re.compile(
    r"\.serve_forever\(|\bHTTPServer\(|\buvicorn\.run\(|\bapp\.run\(|\bweb\.run_app\(|\.listen\(\s*(?:\d|port|PORT)"
)
_RUNS_FILE = re.compile(
    r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:python3?|node)\s+((?:\./)?[\w./-]+\.(?:py|js|mjs))\s*(?:\s[^;&|<>]*)?$"
)


# "the port from the PORT environment variable": the names a task reads from the environment.
_ENV_NAMED = re.compile(
    r"\b(?:environment variable|env(?:ironment)? var(?:iable)?)s?\s+`?([A-Z][A-Z0-9_]*)`?"
    r"|`?\b([A-Z][A-Z0-9_]*)`?\s+(?:environment|env) var",
)
# A double-quoted argument holding `$NAME`: the shell puts its value there before the command runs.
_EXPANDED = re.compile(r'"[^"\n]*\$\{?([A-Z][A-Z0-9_]*)\b[^"\n]*"')


# What sets a variable in the shell, and the shell's own words around it (`if [ -n "$PORT" ]; then`).
_SETS_VARIABLE = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=\S*$")
_SHELL_CONTROL = re.compile(r"^(?:(?:el)?if\s+\[.*\]|then|else|fi)$")


def _environment_names(task: str) -> set[str]:
    return {name for pair in _ENV_NAMED.findall(task) for name in pair if name}


# Text the shell passes on as it is: a single-quoted string, a quoted heredoc's body.
_LITERAL_TEXT = re.compile(r"""'[^']*'|<<-?\s*(['"])(\w+)\1[^\n]*\n.*?^\s*\2\s*$|\\\$""", re.MULTILINE | re.DOTALL)


def _without_literal_text(command: str) -> str:
    """`command` with what the shell does not expand left out; the double-quoted text inside single
    quotes (`printf '... "${PORT:-8000}" ...'`) is written as it stands."""
    out, i = [], 0
    in_double = False
    while i < len(command):
        char = command[i]
        if char == '"' and (i == 0 or command[i - 1] != "\\"):
            in_double = not in_double
        elif not in_double and (match := _LITERAL_TEXT.match(command, i)):
            i = match.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


def variable_only_set(command: str, task: str) -> str | None:
    """Why a command that only sets, in the shell, the variable the task's program is to read from its
    environment (`export PORT=8080`, an `if` that gives PORT its default) does not do the task: the
    program's code is unchanged, and the shell's variable is gone after the session."""
    names = _environment_names(task)
    parts = [part.strip() for part in simple_commands(command)]
    assigned = [m.group(1) for part in parts if (m := _SETS_VARIABLE.match(part))]
    if not assigned or not set(assigned) <= names:
        return None
    if not all(_SETS_VARIABLE.match(part) or _SHELL_CONTROL.match(part) for part in parts):
        return None
    return render("refusals/variable_only_set", name=assigned[0])


def expanded_variable(command: str, task: str) -> str | None:
    """Why a command that writes a file may not put `$PORT` in double quotes where the task wants the
    program to read PORT from its environment: the file would hold today's value, fixed."""
    names = _environment_names(task)
    if not names or not (sed_targets(command) or redirected_files(command)):
        return None
    for name in _EXPANDED.findall(_without_literal_text(command)):
        if name in names:
            return render("refusals/expanded_variable", name=name)
    return None


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
Overwritten = dict[str, tuple[str, str | None]]


class CommandGuards:
    """The guards for one sandbox; `read` gives a file's text, or None where there is none."""

    def __init__(self, sandbox: Sandbox, read: Callable[[str], str | None], policies: Policies | None = None):
        self.sandbox = sandbox
        self.read = read
        self.policies = policies or Policies.every()
        self.offline = False  # an install has failed for want of a network

    def refusal(self, command: str, task: str) -> str | None:
        """Why `command` may not run: it deletes a file the task names, and the task asks for no deletion.
        (Told to stop tracking `debug.log`, or to make `wordcount.py` runnable, a small model deletes it.)
        Or it installs a package, after an install found no network: small models try again and again.
        Or it changes a file the task says to leave as it is (the data a program fails on, the tests). Or it
        writes the value of a variable the program is to read from its environment into a file, or only
        sets that variable in the shell."""
        on = self.policies.on
        if self.offline and _INSTALL.search(command):
            return render("notes/no_network", not_run=True)
        if on("env-variable") and (expanded := expanded_variable(command, task) or variable_only_set(command, task)):
            return expanded
        written = [*redirected_files(command), *sed_targets(command), *removed_files(command)]
        kept = files_to_keep(task) if on("keep-named") else set()
        for path in (path.removeprefix("./") for path in written):
            if path in kept:
                return render("refusals/file_to_leave", path=path)
        if on("named-deletion") and (named := _named_deletion(command, task)) is not None:
            return render("refusals/named_deletion", why=named[1])
        return None

    def placement(self, command: str, task: str) -> tuple[str | None, str] | None:
        """Where `command` puts its change in the wrong place: a version bump that rewrites a changelog's
        history, an append of what the task wants at the top, a `git rm` of a file the task names and
        does not ask to delete. The command that puts it right (None where there is none to give) and
        why; None for other commands."""
        on = self.policies.on
        return (
            (without_history(command, task) if on("version-history") else None)
            or (at_top(command, task, self.read) if on("at-top") else None)
            or (kept_on_disk(command, task) if on("named-deletion") else None)
        )

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
                return path
        return None

    def failure_advice(self, obs: Observation) -> str | None:
        """The exact way past a failure small models do not know how to get past, or None: a script
        that may not run, an install that cannot download (after which no install runs again), code
        echoed in quotes that do not close."""
        if _INSTALL.search(obs.command) and _OFFLINE.search(obs.output) and self.policies.on("offline-install"):
            self.offline = True
            return render("notes/no_network", not_run=False)
        if not self.policies.on("failure-advice"):
            return None
        if obs.syntax_error and _ECHOED_TEXT.search(obs.command):
            return render("notes/unclosed_echo")
        denied = _NOT_EXECUTABLE.search(obs.output) if obs.exit_code == 126 else None
        # Without an interpreter line, a script run directly is read by the shell: `import: command not found`.
        misread = None if denied else _READ_BY_SHELL.search(obs.output)
        found = denied or misread
        if found is None:
            return None
        path = found.group(1).removeprefix("./")
        text = self.read(path)
        if text is None:
            return None
        line = INTERPRETER_LINES.get("." + path.rsplit(".", 1)[-1]) if "." in path else None
        lacks_line = line if line and not text.startswith("#!") else None
        if not denied and not lacks_line:
            return None
        # What is missing, not the commands that add it: those would be the task's solution.
        return render("notes/script_cannot_run", path=path, not_executable=bool(denied), interpreter_line=lacks_line)

    def make_missing_folders(self, command: str) -> str | None:
        """Make the folders of the repository that `command` redirects into and lacks (unless it makes
        folders itself); a note naming them, or None. `cat > tests/test_x.py` fails without tests/, and
        small models then resend it unchanged. It runs in the model's shell, where its paths point."""
        if re.search(r"\bmkdir\b", command) or not self.policies.on("missing-folders"):
            return None
        parents = {
            path.rsplit("/", 1)[0]
            for path in redirected_files(command)
            if "/" in path and not path.startswith(("/", "~", "$")) and ".." not in path.split("/")
        }
        if not parents:
            return None
        folders = " ".join(shlex.quote(p) for p in sorted(parents))
        make = '[ -d "$__ac_d" ] || { mkdir -p -- "$__ac_d" && echo "$__ac_d"; }'
        listing = self.sandbox.run(f"for __ac_d in {folders}; do {make}; done").output.splitlines()
        made = [folder for folder in listing if folder in parents]
        return render("notes/folder_made", folders=made) if made else None

    def before_overwrites(self, command: str) -> Overwritten:
        """What each file `command` writes over with `>`, or adds to with `>>`, holds now, for
        `undo_lossy_overwrites`."""
        before = {path: (">>", self.read(path)) for path in appended_files(command)}
        return before | {path: (program, self.read(path)) for path, program in overwrites(command)}

    def undo_lossy_overwrites(self, command: str, before: Overwritten) -> list[str]:
        """Put back each file a `>` of `command` wrote over and so lost what it held, and each settings
        file a `>>` gave a second line for a key it sets; a note for each."""
        notes = []
        for path, (program, old) in before.items():
            new = self.read(path)
            if old is None or new is None:
                continue
            if program == ">>":
                if self.policies.on("duplicate-setting") and (duplicate := duplicated_setting(path, old, new)):
                    self.sandbox.write_file(path, old)
                    notes.append(_duplicate_note(path, *duplicate))
                elif self.policies.on("broken-append") and (broken := _broken_by_append(path, old, new)):
                    self.sandbox.write_file(path, old)
                    notes.append(broken)
                continue
            if not self.policies.on("lossy-overwrite") or (loss := overwrite_loss(old, new, program)) is None:
                continue
            self.sandbox.write_file(path, old)
            emptied = path in command.split(">", 1)[0] and not new.strip()
            notes.append(
                render(
                    "notes/overwrite_put_back",
                    path=path,
                    loss=loss,
                    program=program,
                    emptied_before_read=emptied,
                    **_line_placement(path, new),
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


def _duplicate_note(path: str, key: str, line: int, added: str) -> str:
    """What an append that set `key` a second time did, and the `sed` that changes the line instead."""
    replacement = re.sub(r"([\\&|])", r"\\\1", added)
    edit = f"sed -i {shlex.quote(f'{line}s|.*|{replacement}|')} {shlex.quote(path)}"  # that line only
    return render("notes/duplicate_setting", path=path, added=added.strip(), key=key, line=line, edit=edit)


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
