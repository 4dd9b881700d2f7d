"""Read a shell command closely enough to tell whether it only edits files inside the workspace.

The `auto-edit` approval mode runs such commands without asking. The reading is conservative on
purpose: command substitution, pipes, subshells, variables in paths, or any program outside a short
list make a command an ordinary command, which asks. What counts as an edit: `cat > FILE <<EOF`,
`echo/printf ... > FILE`, `tee FILE`, `sed -i` with plain `s`/`y` scripts, `mkdir`, `touch`, and
`patch`/`git apply` whose patch names only workspace files.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

# A here-document operator (`<<EOF`, `<<-'EOF'`, `<< "EOF"`), but not a here-string (`<<<`).
_HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))")
_SEPARATORS = {";", "&&", "||", ";;"}
_PIPES = {"|", "|&", "&"}
_WRITES = {">", ">>", ">|", "&>", "&>>"}
_DUPS = {">&", "<&"}
_UNSAFE_TEXT = ("`", "$(", "<(", ">(")


@dataclass
class CommandKind:
    """What a command is, for approvals.

    `programs` names the programs it runs, in order; None when the command could not be read
    (then no "always" answer can cover it). `edit` is True only for workspace-only file edits.
    """

    edit: bool
    programs: tuple[str, ...] | None
    targets: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def label(self) -> str:
        if self.edit:
            return "file edits in the workspace"
        return " | ".join(self.programs or ()) or "this command"


@dataclass
class _Segment:
    words: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    stdin: str | None = None  # a here-document or here-string body
    bad: str = ""


def classify(command: str, inside: Callable[[str], bool]) -> CommandKind:
    """Classify `command`; `inside(path)` says whether a path, as the command names it, is in the workspace."""
    lexed = _lex(command)
    if isinstance(lexed, str):
        return CommandKind(False, None, reason=lexed)
    segments, operators = lexed
    programs = tuple(dict.fromkeys(s.words[0] for s in segments if s.words))
    if any(op in _PIPES for op in operators):
        return CommandKind(False, programs, reason="pipes or background jobs")
    targets: list[str] = []
    writes_any = False
    for segment in segments:
        verdict = _segment_edit(segment)
        if isinstance(verdict, str):
            return CommandKind(False, programs, reason=verdict)
        writes_any = writes_any or bool(verdict)
        targets += verdict
        for path in segment.reads:
            if not _plain_path(path) or not inside(path):
                return CommandKind(False, programs, reason=f"reads {path} outside the workspace")
    for path in targets:
        if path == "/dev/null":
            continue
        if not _plain_path(path) or not inside(path):
            return CommandKind(False, programs, targets, reason=f"writes {path} outside the workspace")
    if not writes_any:
        return CommandKind(False, programs, reason="writes no file")
    return CommandKind(True, programs, targets)


def _plain_path(path: str) -> bool:
    """No expansions, globs or home directories, and nothing under .git (hooks there would run code)."""
    if not path or any(c in path for c in "$~*?[{"):
        return False
    return ".git" not in path.replace("\\", "/").split("/")


def _lex(command: str) -> tuple[list[_Segment], list[str]] | str:
    """Split into simple commands (segments) and the operators between them, or say why not."""
    text, bodies, expands = _cut_heredocs(command)
    if text is None:
        return "an unterminated here-document"
    if expands or any(mark in text for mark in _UNSAFE_TEXT):
        return "command substitution"
    lexer = shlex.shlex(text.replace("\\\n", " ").replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return "unbalanced quotes"
    segments = [_Segment()]
    operators: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        current = segments[-1]
        if not _is_operator(token):
            current.words.append(token)
            i += 1
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if token in _SEPARATORS or token in _PIPES:
            operators.append(token)
            segments.append(_Segment())
            i += 1
            continue
        if nxt is None or _is_operator(nxt):
            return f"a dangling {token}"
        if current.words and current.words[-1].isdigit():
            current.words.pop()  # `2>` names a file descriptor, not an argument
        if token in _WRITES:
            current.writes.append(nxt)
        elif token in _DUPS:
            if not (nxt.isdigit() or nxt == "-"):
                return f"an unusual redirection {token}{nxt}"
        elif token == "<":
            current.reads.append(nxt)
        elif token in ("<<", "<<-"):
            if not bodies:
                return "a here-document that could not be read"
            current.stdin = bodies.pop(0)
        elif token == "<<<":
            current.stdin = nxt
        else:
            return f"the operator {token}"
        i += 2
    if bodies:
        return "a here-document that could not be read"
    segments = [s for s in segments if s.words or s.writes]
    if not segments:
        return "an empty command"
    return segments, operators


def _is_operator(token: str) -> bool:
    return bool(token) and all(c in "();<>|&" for c in token)


def _cut_heredocs(command: str) -> tuple[str | None, list[str], bool]:
    """The command without its here-document bodies (None if one is unterminated), the bodies in
    order, and whether a body runs command substitution (its delimiter unquoted, so it expands)."""
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    expands = False
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for match in _HEREDOC.finditer(line):
            strip_tabs = match.group(1) == "-"
            quoted = match.group(2) is not None or match.group(3) is not None
            delimiter = match.group(2) or match.group(3) or match.group(4)
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate == delimiter:
                    break
                body.append(lines[i - 1])
            else:
                return None, [], False
            text = "\n".join(body)
            expands = expands or (not quoted and any(mark in text for mark in ("`", "$(")))
            bodies.append(text)
    return "\n".join(kept), bodies, expands


def _segment_edit(s: _Segment) -> list[str] | str:
    """The files a simple command writes if it is edit-safe, else why it is not."""
    if not s.words:
        return s.writes  # a bare `> file`
    program, args = s.words[0], s.words[1:]
    if "=" in program or "/" in program:
        return f"{program} is not a plain program name"
    if program in ("echo", "printf", "true", ":"):
        return s.writes
    if program == "cat":
        if args or s.stdin is None:
            return "cat reads files"
        return s.writes
    if program == "tee":
        files = [a for a in args if a not in ("-a", "--append")]
        if any(a.startswith("-") for a in files):
            return "tee with options"
        return files + s.writes
    if program in ("mkdir", "touch"):
        allowed = {"mkdir": ("-p", "--parents", "-v"), "touch": ()}[program]
        files = [a for a in args if a not in allowed]
        if not files or any(a.startswith("-") for a in files):
            return f"{program} with options"
        return files + s.writes
    if program == "sed":
        return _sed_targets(args, s.writes)
    if program == "patch":
        return _patch_targets(args, s, default_strip=None)
    if program == "git" and args[:1] == ["apply"]:
        return _patch_targets(args[1:], s, default_strip=1)
    return f"{program} is not an editing command"


def _sed_targets(args: list[str], writes: list[str]) -> list[str] | str:
    in_place = False
    scripts: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-i" or (arg.startswith("-i") and "/" not in arg) or arg.startswith("--in-place"):
            in_place = True
        elif arg in ("-E", "-r", "-n", "-z", "-s", "--regexp-extended"):
            pass
        elif arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 1
        elif arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
        elif arg.startswith("-"):
            return f"sed option {arg}"
        elif not scripts:
            scripts.append(arg)
        else:
            files.append(arg)
        i += 1
    if not in_place or not files:
        return "sed without -i prints rather than edits"
    if not all(_plain_sed(script) for script in scripts):
        return "a sed script beyond plain substitutions"
    return files + writes


def _plain_sed(script: str) -> bool:
    """Only `s` and `y` commands, each with at most a line-number address, and no `e` or `w` flag."""
    i, n = 0, len(script)
    while True:
        while i < n and script[i] in " \t\n;":
            i += 1
        if i >= n:
            return True
        address = re.match(r"\d+(?:,\d+)?|\$", script[i:])
        if address:
            i += address.end()
        if i + 1 >= n or script[i] not in "sy":
            return False
        command, delimiter = script[i], script[i + 1]
        if delimiter.isalnum() or delimiter in " \t\n\\;":
            return False
        i += 2
        for _ in range(2):
            while i < n and script[i] != delimiter:
                i += 2 if script[i] == "\\" else 1
            if i >= n:
                return False
            i += 1
        if command == "s":
            while i < n and script[i] in "gpiIm0123456789":
                i += 1
        if i < n and script[i] not in " \t\n;":
            return False


def _patch_targets(args: list[str], s: _Segment, default_strip: int | None) -> list[str] | str:
    strip = default_strip
    files: list[str] = []
    for arg in args:
        if m := re.fullmatch(r"-p(\d+)", arg):
            strip = int(m.group(1))
        elif arg in ("-N", "--forward", "-s", "--silent", "--quiet", "-v", "--verbose", "-R", "--reverse"):
            pass
        elif arg.startswith("-"):
            return f"option {arg}"
        else:
            files.append(arg)
    body = s.stdin
    if body is None:
        return "a patch that is not inline"
    named = []
    for line in body.splitlines():
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t")[0].strip()
            if path == "/dev/null":
                continue
            parts = [p for p in path.split("/") if p]
            if path.startswith("/") or ".." in parts:
                return f"a patch naming {path}"
            parts = parts[-1:] if strip is None else parts[strip:]
            if not parts:
                return f"a patch naming {path}"
            named.append("/".join(parts))
    return files + named + s.writes
