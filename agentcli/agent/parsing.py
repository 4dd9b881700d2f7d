"""Turn a model's free text into one action, leniently enough for small local models.

Small models put several commands in one reply, echo earlier observations, forget the finish
marker, or answer with a bare command. Rather than reject such replies, take the first command,
say what was ignored, and recognise a plain "the task is done" ending.
"""

from __future__ import annotations

import ast
import re
import shlex
import textwrap
from collections import Counter
from dataclasses import dataclass, field

from agentcli.agent.edits import defined_names, without_comment_lines
from agentcli.agent.pysource import parse
from agentcli.prompts import render

# The languages a ```python block is labelled with.
PYTHON_LANGUAGES = frozenset({"python", "py", "python3"})
SHELL_LANGUAGES = {
    "",
    "bash",
    "sh",
    "shell",
    "zsh",
    "console",
    "terminal",
    "shell-session",
    "cmd",
    "bash session",
}
# A finish marker at the start of a line: "DONE: summary", "TASK COMPLETE", "FINISHED - summary".
_FINISH_LINE = re.compile(
    r"^\s*(?:\*\*|#+\s*)?(DONE|TASK[ _]COMPLETE(?:D)?|FINISHED|COMPLETE_TASK\w*)\b\**\s*[:\-–.!]?\s*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
# Commands models use to say they are finished.
_FINISH_COMMAND = re.compile(
    r"^\s*(?:echo\s+['\"]?(?:DONE|TASK[ _]COMPLETE\w*|COMPLETE_TASK\w*|FINISHED)\b.*|exit(?:\s+0)?|done)\s*$",
    re.IGNORECASE,
)
# Plain-language endings, recognised only when the reply carries no command.
_DONE_PROSE = re.compile(
    r"\b(task (?:is |has been )?(?:now )?(?:complete|completed|done|finished)"
    r"|(?:i have|i've|has been|have been) (?:successfully )?(?:completed|fixed|implemented|created|added|updated|"
    r"resolved|renamed|written|finished)"
    r"|all (?:the )?tests (?:now )?pass|nothing (?:more|else) (?:to do|is needed)|no further (?:action|changes)"
    r"|the (?:fix|change|changes|implementation) (?:is|are) (?:now )?(?:complete|in place|done))",
    re.IGNORECASE,
)
# An opening fence may follow text on its line ("2. Command: ```bash"), as small models write it.
_FENCE = re.compile(r"(`{3,}|~{3,})[ \t]*([\w+\-. ]*?)[ \t]*$", re.MULTILINE)
# A whole block on one line: ```bash ls -la```
_INLINE_BLOCK = re.compile(r"```(?:bash|sh|shell)?[ \t]+([^`\n]+?)[ \t]*```")
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
# How agentcli's own notes (`[next: ... DONE: only when ...]`, `[note] ...`) and its observations'
# headers (`[exit 0 · 0.1s]`) start.
_NOTE_START = r"\[(?:next:|note\])"
_HEADER_START = r"\[(?:exit|timed out|syntax error|no command)"
# agentcli's own notes copied into a reply: never the model's words (the `DONE:` in the copy is not a
# claim of being done).
_OWN_NOTE = re.compile(rf"^[ \t]*{_NOTE_START}[^\n]*$", re.MULTILINE | re.IGNORECASE)
# A plan's item; the first may follow "PLAN:" on its line.
# Plans longer than this are a model numbering on and on; steps past it are dropped.
MAX_PLAN_STEPS = 6
# A prose line at least this long, said this many times in one reply, is a reply in a loop.
REPEATED_LINE_CHARS = 20
REPEATS_TO_STOP = 3
MAX_REPEATED_GROUP = 8  # lines; a loop inside a block repeats a group of commands
_FINISHING_STEP = re.compile(
    r"^(?:exit|done|finish(?:ed)?|submit|end|stop|complete)(?:\s+(?:the\s+)?(?:task|session|program|shell))?\W*$",
    re.IGNORECASE,
)
_PLAN_ITEM = re.compile(
    r"^\s*(?:\**PLAN\**\s*:\**\s*)?(?:step\s*)?(\d{1,2})[.):]\s+(.+?)\s*$", re.IGNORECASE | re.MULTILINE
)
# The header our observations start with; a block that starts like it is an echo, not a command.
OBSERVATION_HEADER = re.compile(rf"^\s*{_HEADER_START}", re.IGNORECASE)
# A line of agentcli's own, a note or an observation's header, as the model copies it.
_OWN_LINE = re.compile(rf"^\s*(?:{_NOTE_START}|{_HEADER_START})", re.IGNORECASE)
_COMMON_COMMANDS = [
    "ls",
    "cat",
    "cd",
    "pwd",
    "echo",
    "grep",
    "rg",
    "find",
    "sed",
    "awk",
    "head",
    "tail",
    "wc",
    "python",
    "python3",
    "pytest",
    "pip",
    "git",
    "make",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "rm",
    "chmod",
    "diff",
    "sort",
    "uniq",
    "cut",
    "tr",
    "node",
    "npm",
    "go",
    "cargo",
    "bash",
    "sh",
    "printf",
    "test",
    "tree",
]


@dataclass
class Block:
    language: str
    body: str
    closed: bool
    start: int = 0  # where the opening fence's line begins in the text
    end: int = 0  # just past the closing fence


@dataclass
class ParsedReply:
    """What one reply asks for. Exactly one of `command`, `finished` or `error` is meaningful."""

    text: str
    command: str | None = None
    finished: bool = False
    summary: str = ""
    plan: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    file_write: tuple[str, str] | None = None  # (path, content) from a block under a file name
    # (language, body) of a code block that is neither a command nor under a file name: the loop
    # may still place it (a Python block whose functions one file defines), else `error` stands.
    code: tuple[str, str] | None = None
    # A finish marker came with a command: finish if that command succeeds.
    finish_after_command: bool = False
    # The reply as the history should keep it, when only part of it was acted on.
    history_text: str | None = None


# A command block holding only a description in angle brackets: `<add the flag to the parser>`.
_PLACEHOLDER = re.compile(r"^\s*<[^<>\n]+>\s*$")
# A line of prose a small model puts inside its command block ("THOUGHT: I will list the files").
_PROSE_LINE = re.compile(r"^\s*(?:THOUGHT|PLAN|REASONING|EXPLANATION|STEP \d+)\s*:", re.IGNORECASE)


def _without_prose(block: Block) -> tuple[Block, bool]:
    """A shell block without its THOUGHT:/PLAN: lines, and whether it had any."""
    if block.language not in SHELL_LANGUAGES:
        return block, False
    lines = block.body.splitlines(keepends=True)
    kept = [line for line in lines if not _PROSE_LINE.match(line)]
    if len(kept) == len(lines):
        return block, False
    return Block(block.language, "".join(kept), block.closed, block.start, block.end), True


_DONE_IN_BLOCK = re.compile(r"^DONE\b:", re.MULTILINE)


def find_blocks(text: str) -> list[Block]:
    """Fenced code blocks in order; an unclosed final fence runs to the end of the text.

    Bodies are dedented, since models often indent a block under a list item.
    """
    blocks: list[Block] = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if not opening:
            return blocks
        fence, language = opening.group(1), opening.group(2).strip().lower()
        line_start = text.rfind("\n", 0, opening.start()) + 1
        start = opening.end() + 1
        # The closing fence stands on its own line, or ends the block's last line.
        closing = re.compile(
            rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$|(?<=\S){re.escape(fence)}[ \t]*$", re.MULTILINE
        )
        end = closing.search(text, start) if start <= len(text) else None
        if end is None:
            # An unclosed block ends where the model declares itself done: `DONE:` is no code.
            done = _DONE_IN_BLOCK.search(text, start)
            stop = done.start() if done else len(text)
            blocks.append(Block(language, textwrap.dedent(text[start:stop]), False, line_start, stop))
            return blocks
        blocks.append(Block(language, textwrap.dedent(text[start : end.start()]), True, line_start, end.end()))
        pos = end.end()


def action_complete(text: str) -> bool:
    """Whether a reply being streamed already holds its action, so generation can stop early.

    True once the first shell block is closed, or once a finish line is complete and no block is open.
    Small local models go on to invent the command's output and further steps; those tokens cost
    seconds each and are ignored anyway.
    """
    clean = _THINK.sub("", text)
    blocks = find_blocks(clean)
    if any(
        b.closed and b.language in SHELL_LANGUAGES and b.body.strip() and not OBSERVATION_HEADER.match(b.body)
        for b in blocks
    ):
        return True
    if blocks and not blocks[-1].closed:
        return False
    marker = _FINISH_LINE.search(clean)
    return marker is not None and marker.group(2).strip() != "" and clean.endswith("\n")


def _strip_prompts(body: str) -> str:
    """Drop `$ ` prompts that console-style blocks put before each command."""
    lines = body.splitlines()
    prompted = [ln for ln in lines if ln.strip()]
    if prompted and all(re.match(r"^\s*\$ ", ln) for ln in prompted):
        return "\n".join(re.sub(r"^\s*\$ ", "", ln) for ln in lines)
    return body


def _outside_blocks(text: str) -> str:
    # An unclosed block ends at a `DONE:` line (see find_blocks), which is prose again.
    pattern = rf"(`{{3,}}|~{{3,}}).*?(\1|(?={_DONE_IN_BLOCK.pattern})|\Z)"
    blocks = re.sub(pattern, "\n", text, flags=re.DOTALL | re.MULTILINE)
    return _FENCE.sub("\n", blocks)


def extract_plan(text: str) -> list[str] | None:
    """A numbered list of at least two items outside code blocks, numbered from 1.

    A small model can number the same step over and over ("5. If the tests pass, ... 6. If the tests
    pass, ..."): a step that repeats an earlier one ends the plan, and it has at most MAX_PLAN_STEPS.
    """
    prose = _outside_blocks(text)
    items = _PLAN_ITEM.findall(prose)
    if len(items) < 2 or items[0][0] != "1":
        return None
    plan: list[str] = []
    for expected, (number, step) in enumerate(items[:MAX_PLAN_STEPS], 1):
        step = step.strip().rstrip(".").strip("*").strip()
        if int(number) != expected or step.lower() in (earlier.lower() for earlier in plan):
            break
        if not _FINISHING_STEP.match(step):  # "4. Exit": the DONE line, which no command does
            plan.append(step)
    return plan if len(plan) >= 2 else None


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def repeating(text: str) -> bool:
    """Whether a reply being streamed has fallen into a loop: a prose line said REPEATS_TO_STOP times
    (numbers aside), the same lines (or sentences of its last line) over and over at its end, or
    empty shell blocks one after another. Nothing useful follows, and a small model in such a loop runs to the
    reply's token limit (minutes on a CPU)."""
    blocks = find_blocks(text)
    if sum(1 for b in blocks if b.closed and b.language in SHELL_LANGUAGES and not b.body.strip()) >= 2:
        return True
    lines = [re.sub(r"\d+", "#", line.strip()) for line in _outside_blocks(text).splitlines()]
    counts = Counter(line for line in lines if len(line) >= REPEATED_LINE_CHARS)
    return (
        any(n >= REPEATS_TO_STOP for n in counts.values())
        or _repeating_tail(text.splitlines())
        or _repeating_tail(_finished_sentences(text.rpartition("\n")[2]))
    )


def _finished_sentences(line: str) -> list[str]:
    """The sentences of `line` that have ended: a loop can go round within one line ("The task is
    done. The changes are committed. The task is done. ...") and never end it."""
    sentences = _SENTENCE_END.split(line)
    return sentences if line.rstrip().endswith((".", "!", "?")) else sentences[:-1]


def _repeating_tail(lines: list[str]) -> bool:
    """Whether the text ends in the same group of lines REPEATS_TO_STOP times over, code included."""
    for period in range(1, MAX_REPEATED_GROUP + 1):
        group = lines[-period:]
        if len(lines) < period * REPEATS_TO_STOP or len("".join(group).strip()) < REPEATED_LINE_CHARS:
            continue
        if all(lines[-period * (i + 1) : len(lines) - period * i] == group for i in range(REPEATS_TO_STOP)):
            return True
    return False


_PLAN_HEADER = re.compile(r"^\s*(?:\*\*|#+\s*)?PLAN\**\s*:?\**\s*$", re.IGNORECASE)


def without_plan(text: str) -> str:
    """The reply without its numbered plan (and a bare "PLAN:" line) before the first code block.

    A model that sees its plan in every earlier reply writes it into every new one, at seconds a
    plan on a small CPU; a plan it did not change is kept out of the history it reads.
    """
    blocks = find_blocks(text)
    cut = blocks[0].start if blocks else len(text)
    prose = [
        line
        for line in text[:cut].splitlines(keepends=True)
        if not (_PLAN_HEADER.match(line) or _PLAN_ITEM.match(line))
    ]
    return ("".join(prose).strip() + "\n" + text[cut:]).strip() or text


# Lines that open or close a compound command, continue onto the next line, or start a here-document:
# a first step holding any of them is not cut from the rest.
_COMPOUND = re.compile(r"<<|(?:\\|\||&&|\bdo|\bthen|\{|\(|\belse)\s*$|^\s*(?:done|fi|esac|\}|\))\b")


def first_commented_step(script: str) -> str | None:
    """The first step of a script written as commented steps ("# Fix it" + commands, "# Test" + ...);
    None for any other script.

    Only the first step must be plain commands: a later step's here-document or loop is not run, so its
    lines (comments included) cannot be mistaken for steps of their own and cut wrongly. A script that
    starts with an interpreter line (`#!/bin/bash`, then `# Usage: ...`) is one program, not steps.
    """
    if script.lstrip().startswith("#!"):
        return None
    lines = script.splitlines()
    has_command = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            if has_command:
                later = [ln.strip() for ln in lines[index:]]
                first = "\n".join(lines[:index]).strip("\n")
                if any(ln and not ln.startswith("#") for ln in later) and _quotes_closed(first):
                    return first
                return None  # a "# comment" inside a quoted string (`echo "...` over lines) is no step
        elif stripped:
            if _COMPOUND.search(line):
                return None
            has_command = True
    return None


def _quotes_closed(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:
        return False
    return True


def _bare_command(text: str) -> str | None:
    """A reply that is only a command, without fences: `ls -la` or `$ pytest -q`."""
    stripped = text.strip().strip("`").strip()
    if not stripped or "\n" in stripped:
        return None
    stripped = re.sub(r"^\$\s+", "", stripped)
    first = stripped.split()[0]
    return stripped if first in _COMMON_COMMANDS or first.startswith("./") else None


_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|json|toml|yaml|yml|md|txt|"
    "cfg|ini|csv|tsv|html|css|sql|xml|env|gitignore|dockerfile|lock|log"
)
_PATH = re.compile(rf"(?<![\w/.-])((?:\.?[\w-]+/)*\.?[\w.-]*\.(?:{_EXTENSIONS}))(?![\w/])", re.IGNORECASE)
_PATH_COMMENT = re.compile(
    rf"^\s*(?:#|//|--|<!--)\s*(?:file(?:name)?\s*:\s*)?((?:[\w.-]+/)*[\w.-]+\.(?:{_EXTENSIONS}))\s*(?:-->)?\s*$",
    re.IGNORECASE,
)


def _file_target(text: str, block: Block) -> tuple[str, str, bool] | None:
    """(path, content, headed) when a block is a file's content: named in its first line, or on the
    line(s) just before it; `headed` when the name ends its line ("hello.txt:"), as a heading does."""
    body = block.body
    first, _, rest = body.partition("\n")
    if named := _PATH_COMMENT.match(first):
        return safe_path(named.group(1)), rest, True
    before = [line for line in text[: block.start].splitlines()[-2:] if line.strip()]
    same_line = text[block.start : text.find("\n", block.start)] if block.start < len(text) else ""
    for line in reversed([*before, same_line.split("```")[0].split("~~~")[0]]):
        plain = line.replace("`", " ").replace("*", " ")
        paths = _PATH.findall(plain)
        if paths:
            return safe_path(paths[-1]), body, plain.rstrip(" \t:").endswith(paths[-1])
    return None


# Lines of a shell block under `# backup.sh` that are the script's text, not commands to run now.
_SCRIPT_LINES = 3


def _named_content(path: str, text: str) -> bool:
    """Whether the rest of a shell block whose first line is `# path` is that file's content, not
    commands: a script (`#!`), Python for a .py file, or several lines for another file, unless it
    starts with a command (`# pager.py` above `sed -i ... pager.py`)."""
    first = text.lstrip().partition("\n")[0]
    if text.startswith("#!"):
        return True
    if not first or _looks_like_command(first):
        return False
    if path.endswith(".py"):
        return _is_python(text)
    return text.strip().count("\n") + 1 >= _SCRIPT_LINES


_INLINE_CODE = re.compile(r"`([^`\n]+)`")


def _listed_commands(prose: str) -> list[str]:
    """Commands written as `inline code` in prose, in order: small models list their steps that way."""
    return [code.strip() for code in _INLINE_CODE.findall(prose) if _looks_like_command(code)]


def _looks_like_command(body: str) -> bool:
    words = body.strip().split()
    if len(words) == 1 and words[0].lstrip("$ ") in ("python", "python3", "node"):
        return False  # an interpreter's name in prose ("uses `python3`"): alone it would only wait for input
    return bool(words) and (words[0].lstrip("$ ") in _COMMON_COMMANDS or words[0].startswith("./"))


# Languages whose block is a program: it is the content only of a file of that language (or of a
# script with no suffix). A ```python block under "contacts.csv" is a script meant to work on the
# CSV, and written over it, it would destroy the data.
_LANGUAGE_SUFFIXES = {
    "python": {".py", ".pyw", ""},
    "py": {".py", ".pyw", ""},
    "python3": {".py", ".pyw", ""},
    "javascript": {".js", ".mjs", ".cjs", ".jsx", ""},
    "js": {".js", ".mjs", ".cjs", ".jsx", ""},
    "typescript": {".ts", ".tsx", ""},
}


def _language_fits(language: str, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    suffix = name[name.rfind(".") :].lower() if "." in name.lstrip(".") else ""
    return suffix in _LANGUAGE_SUFFIXES.get(language, {suffix})


def safe_path(path: str) -> str:
    path = path.strip().removeprefix("./")
    return "" if path.startswith("/") or ".." in path.split("/") else path


# How a whole Python script starts: with its imports.
_SCRIPT_START = re.compile(r"\s*(?:import|from)\s+\w")


def parse_reply(text: str, *, strict: bool = False) -> ParsedReply:
    """Read one action out of a reply. See docs/finishing.md for the conventions. `strict`: the reply was
    decoded under the reply grammar, so a `DONE` line is its action, whatever `commands` its prose names."""
    clean = _OWN_NOTE.sub("", _THINK.sub("", text)).strip()
    reply = ParsedReply(text=text, plan=extract_plan(clean))
    blocks = []
    prose_in_block = False
    for found in find_blocks(clean):
        if OBSERVATION_HEADER.match(found.body):
            continue
        block, had_prose = _without_prose(found)
        prose_in_block |= had_prose
        blocks.append(block)
    if prose_in_block:
        reply.notes.append(render("notes/prose_in_block"))
    prose = _outside_blocks(clean)
    marker = _FINISH_LINE.search(prose)
    for block in blocks:
        if not block.body.strip():
            continue
        target = _file_target(clean, block)
        # A bash block is a command unless it is a script (#!); an unlabelled block under a file's
        # name, as a heading, is that file's content.
        is_content = target is not None and (
            block.language not in SHELL_LANGUAGES
            or block.body.startswith("#!")
            or (block.language == "" and target[2] and not _looks_like_command(block.body))
            or (_PATH_COMMENT.match(block.body.partition("\n")[0]) is not None and _named_content(*target[:2]))
        )
        if target and target[0] and is_content and _language_fits(block.language, target[0]):
            reply.file_write = target[0], target[1]
            if len(blocks) > 1:
                reply.notes.append(render("notes/first_block_only"))
            _finish_after_action(reply, marker)
            return reply
        if block.language in SHELL_LANGUAGES:
            break
    shell_blocks = [b for b in blocks if b.language in SHELL_LANGUAGES and b.body.strip()]
    script = [b for b in blocks[: blocks.index(shell_blocks[0])] if b.body.strip()] if shell_blocks else []
    if script and all(b.language in PYTHON_LANGUAGES for b in script) and _SCRIPT_START.match(script[0].body):
        # A script (its imports first), then `cat` of what it writes to check it: the script is the
        # action; the check comes after it has run. A function
        # or an example before a command is not.
        blocks, shell_blocks = script, []
        reply.notes.append(render("notes/check_after_script"))

    if not shell_blocks:
        if (inline := _INLINE_BLOCK.search(clean)) is not None:
            reply.command = inline.group(1).strip()
            return reply
        # Not the DONE line's own words: "DONE: the shebang now uses `python3`" names no command to run.
        listed = (
            []
            if strict and marker
            else _listed_commands(prose[: marker.start()] + prose[marker.end() :] if marker else prose)
        )
        other = [b for b in blocks if b.body.strip()]
        if other and not listed:
            # Code with no file named (often with a DONE after it): not finished until it is placed.
            lang = other[0].language or "plain"
            reply.code = lang, other[0].body
            if len(other) > 1 and all(b.language in PYTHON_LANGUAGES for b in other):
                # A script written a step a block, prose between: each alone would lose what the one
                # before it read (its inputs); together they are the script.
                reply.code = lang, "\n".join(b.body.rstrip("\n") + "\n" for b in other)
                reply.notes.append(render("notes/python_blocks_joined"))
            reply.error = render("format_errors/code_without_file", language=lang)
            _finish_after_action(reply, marker)
            return reply
        if marker and not listed:
            reply.finished = True
            reply.summary = marker.group(2).strip() or _summary_from(prose, marker.start())
            return reply
        if listed:
            # A plan written as a list of `commands` (and often a DONE after it): run the first one.
            reply.command = listed[0]
            if len(listed) > 1 or marker:
                reply.notes.append(render("notes/first_listed_command"))
            return reply
        if any(b.language in SHELL_LANGUAGES for b in blocks) and not prose_in_block:
            # "```bash" and "```" with nothing between: the fences are no bare command (`bash`).
            reply.error = render("format_errors/empty_block")
            return reply
        if (bare := _bare_command(clean)) is not None:
            reply.command = bare
            return reply
        if _DONE_PROSE.search(prose):
            reply.finished = True
            reply.summary = _first_sentence(prose)
            return reply
        reply.error = render("format_errors/only_prose_in_block" if prose_in_block else "format_errors/no_command")
        return reply

    first = shell_blocks[0]
    command = _strip_prompts(first.body).strip("\n")
    lines = command.splitlines()
    invented = next((i for i, line in enumerate(lines) if i and OBSERVATION_HEADER.match(line)), None)
    if invented is not None:
        # `python3 -m pytest` and then `[exit 0 · 0.4s]` and "2 passed": output imagined after the command.
        command = "\n".join(lines[:invented]).strip("\n")
        reply.notes.append(render("notes/invented_output", first_line=lines[invented].strip()))
        fence = "```"
        reply.history_text = f"{clean[: first.start]}{fence}bash\n{command}\n{fence}".strip()
    if _PLACEHOLDER.match(command):
        # The reply format's `<one shell command>` copied with words of the model's own.
        reply.error = render("format_errors/placeholder", placeholder=command.strip())
        return reply
    if _FINISH_COMMAND.match(command.strip()):
        reply.finished = True
        reply.summary = marker.group(2).strip() if marker else _first_sentence(prose)
        return reply
    # "DONE: summary" written inside the command block, as small models do.
    if (inside := _FINISH_LINE.match(command.strip())) and inside.group(1).isupper():
        reply.finished = True
        reply.summary = inside.group(2).strip()
        return reply
    # Code echoed line by line into a file, among echoes of its plan, is one edit, not steps.
    step = None if echoed_file(command) else first_commented_step(command)
    if step is not None:
        # A small model writes its whole plan as one commented script, fix guessed before the
        # failure is seen; run the first step, and let the history show a reply of one step.
        command = step
        reply.notes.append(render("notes/first_step_only"))
        fence = "```"
        reply.history_text = f"{clean[: first.start]}{fence}bash\n{step}\n{fence}".strip()
    if _is_python(command):
        # `import re` and `def parse_duration(...)` in a ```bash block: bash would stop at the first `(`.
        reply.code = "python", command
        reply.notes.append(render("notes/python_in_bash_block"))
        _finish_after_action(reply, marker)
        return reply
    reply.command = command
    # "Here is the fixed function:" and a ```python block, then the tests in a ```bash block: the
    # code is an edit to place before the command (see agent.placing), if a file defines it.
    earlier = [b for b in blocks if b.start < first.start and b.language in PYTHON_LANGUAGES]
    if earlier and earlier[0].body.strip():
        reply.code = "python", earlier[0].body
    if not first.closed:
        reply.notes.append(render("notes/unclosed_block"))
    if len(shell_blocks) > 1:
        reply.notes.append(render("notes/first_command_only", ignored=len(shell_blocks) - 1))
    _finish_after_action(reply, marker)
    return reply


# Statements that make a block Python rather than shell: what else parses as Python in a shell block
# is a bare word (`ls`, `pwd`) or an assignment (`X=1`, shell too).
_PYTHON_STATEMENTS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.With,
    ast.For,
    ast.Try,
)


def _is_python(command: str) -> bool:
    """Whether a shell block's text is Python code: it parses as Python, holds an import, a definition
    or a compound statement, and no bare expression (a shell line that happens to parse: `ls`, `X=1`,
    `cat > f << 'EOF'`)."""
    tree = parse(textwrap.dedent(command))
    if tree is None:
        return False
    # `cat > app.py << 'EOF'` and `EOF` are Python expressions too, which no Python script holds alone.
    bare = any(
        isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Constant)) for node in tree.body
    )
    return not bare and any(isinstance(node, _PYTHON_STATEMENTS) for node in tree.body)


_STEP_REPORT = re.compile(
    r"\b(?:step|plan)\s*\d+\b|\blet'?s\b|\blet us\b"
    r"|\b(?:now|next)\b,?\s+(?:i will|i'll|we will|we'll)\b|\b(?:i|we) (?:still )?need to\b",
    re.IGNORECASE,
)


def step_report(summary: str) -> bool:
    """Whether a DONE summary reports a step, not the task: "Plan 1 completed. Now, let's convert it",
    "the result was the same. Let's try a different approach" (small models say DONE after each step)."""
    return _STEP_REPORT.search(summary) is not None


# The last line a command printed, where the model's own code prints its DONE line.
_PRINTED_DONE = re.compile(r"^DONE:[ \t]*(.*?)\s*\Z", re.MULTILINE)


def printed_done(command: str, output: str) -> str | None:
    """The summary of the DONE line that `command`'s own code printed last, or None. Asked for one
    reply, a small model ends its script with `print("DONE: ...")` and takes the task as finished."""
    if "DONE:" not in command:
        return None
    match = _PRINTED_DONE.search(output.rstrip())
    return match.group(1) if match else None


def _finish_after_action(reply: ParsedReply, marker: re.Match[str] | None) -> None:
    """A finish marker beside an action: finish once the action succeeds. With an action present,
    only an upper-case marker counts: "Done reading the file" does not."""
    if marker and marker.group(1).isupper():
        reply.finish_after_command = True
        reply.summary = marker.group(2).strip()


def _first_sentence(prose: str) -> str:
    text = " ".join(prose.split())
    match = re.match(r"(.{1,300}?[.!])(\s|$)", text)
    return (match.group(1) if match else text[:300]).strip()


def _summary_from(prose: str, start: int) -> str:
    """Text after a bare marker line, when the summary is on the following lines."""
    after = prose[start:].split("\n", 1)
    return _first_sentence(after[1]) if len(after) > 1 else ""


# `echo "text" >> file`, read as written: the text between the first quote and the last. The shell
# reads `echo "    """Counts of items.""" >> f.py` as three strings and drops the docstring's quotes;
# the model meant the line between the outer ones.
_ECHO_AS_WRITTEN = re.compile(r"""^\s*echo\s+(["'])(.*)\1\s*(?:(>>?)\s*([\w./-]+)\s*)?$""")


_CUT_DOCSTRING = re.compile(r'^(\s*"""[^"]*)""$')


def _echo_lines(command: str) -> list[tuple[str, str, str]] | None:
    """(text, redirect, file) for each line of a block made only of `echo "text"` lines, each perhaps
    with `> file` or `>> file` ("" for neither), the text as written between its outer quotes; None
    for anything else."""
    found = []
    for line in without_comment_lines(command).splitlines():
        if not re.match(r"""^\s*echo\s+["']""", line) or "$" in line or "`" in line:
            return None
        if written := _ECHO_AS_WRITTEN.match(line):
            quote, text, redirect, path = written.groups()
            if quote == '"':
                text = re.sub(r'\\(["\\])', r"\1", text)
                # `echo "    """Docstring.""" >> f.py`: the outer closing quote was the docstring's last.
                text = _CUT_DOCSTRING.sub(r'\1"""', text)
            found.append((text, redirect or "", path or ""))
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            return None
        if len(words) == 2:
            found.append((words[1], "", ""))
        elif len(words) == 4 and words[2] in (">", ">>"):
            found.append((words[1], words[2], words[3]))
        else:
            return None
    return found


def _as_python(lines: list[str]) -> str | None:
    """The lines as Python that parses (dedented); a literal `\\n` in them is a line break when only
    that way they parse (`echo` writes it as backslash and n). None when they do not parse."""
    for text in ("\n".join(lines) + "\n", "\n".join(lines).replace("\\n", "\n") + "\n"):
        if parse(textwrap.dedent(text)) is not None:
            return textwrap.dedent(text)
    return None


def echoed_python(command: str) -> str | None:
    """The Python definitions a block of nothing but `echo "..."` lines prints, one line each; None
    for anything else. A small model "writes" code that way, to the terminal instead of a file."""
    lines = _echo_lines(command)
    if lines is None or len(lines) < 2 or any(redirect for _, redirect, _ in lines):
        return None
    code = _as_python([text for text, _, _ in lines])
    return code if code is not None and defined_names(code) else None


def echoed_file(command: str) -> tuple[str, str] | None:
    """(file, content) for `echo "line" > f.py` followed by `echo "line" >> f.py` lines: a Python file
    written from memory one line at a time, which is meant as its new content (and so, as a block,
    can be spliced into the file instead of replacing what the model did not rewrite). Appended
    definitions (`>>` only) are meant as the new version of their namesakes too. Among echo lines
    that also write other text (its plan, a line for another file), the longest run of those for
    one Python file that holds definitions is that code."""
    lines = _echo_lines(command)
    if lines is None or len(lines) < 2:
        return None
    path, first = lines[0][2], lines[0][1]
    if path.endswith(".py") and first and all((r, f) == (">>", path) for _, r, f in lines[1:]):
        code = _as_python([text for text, _, _ in lines])
        if code is not None and (first == ">" or defined_names(code)):
            return path, code  # appending plain statements (`x = 1`) is an append
    return _echoed_definitions(lines)


# The most echo lines searched for a run of definitions among other text.
_MAX_SEARCHED_ECHOES = 80


def _echoed_definitions(lines: list[tuple[str, str, str]]) -> tuple[str, str] | None:
    """(file, code): the longest run, of at least three lines, of the echo lines for the Python file
    most of them write that parses and defines something; None where there is none."""
    targets = Counter(f for _, r, f in lines if r and f.endswith(".py"))
    if not targets or len(lines) > _MAX_SEARCHED_ECHOES:
        return None
    path = targets.most_common(1)[0][0]
    texts = [text for text, r, f in lines if r and f == path]
    for size in range(len(texts), 2, -1):
        for start in range(len(texts) - size + 1):
            code = _as_python(texts[start : start + size])
            if code is not None and defined_names(code):
                return path, code
    return None


# One `echo "` whose quoted text runs over several lines: a program printed, perhaps with `> file`.
_OPEN_ECHO = re.compile(r"""^\s*echo\s+(?:-e\s+)?(["'])(.*)$""")
_ECHO_END = re.compile(r"""^(.*?)(["'])\s*(?:(>>?)\s*([\w./-]+))?\s*$""")


def echoed_program(command: str) -> tuple[str, str, str] | None:
    """(code, file, rest) for a block that starts with one `echo "` printing Python code over several
    lines: the code (the longest run of lines that parses and defines something), the file it is
    redirected to ("" for none), and the commands after it. None where the shell would write the
    code as meant: the echo's quotes balance and it goes to a file."""
    lines = command.strip("\n").splitlines()
    while lines and lines[0].lstrip().startswith("#"):
        lines = lines[1:]
    opened = _OPEN_ECHO.match(lines[0]) if lines else None
    if opened is None or opened.group(2).rstrip().endswith(opened.group(1)):
        return None  # a one-line echo: the echo-line readers judge it
    text = [opened.group(2), *lines[1:]]
    for end in range(len(text), 1, -1):
        body, path = text[:end], ""
        if (closing := _ECHO_END.match(body[-1])) and closing.group(2) == opened.group(1):
            body = [*body[:-1], closing.group(1)]
            path = closing.group(4) or ""
        code = _as_python(body)
        if code is None or not defined_names(code):
            continue
        rest = "\n".join(lines[end:]).strip("\n")
        try:
            balanced = len(shlex.split("\n".join(lines[:end]))) > 0
        except ValueError:
            balanced = False
        if path and balanced and opened.group(1) not in "\n".join(body):
            return None
        while code.rstrip("\n").rsplit("\n", 1)[-1].lstrip().startswith("#"):
            code = code.rstrip("\n").rsplit("\n", 1)[0] + "\n"  # "# Run the tests": the next command's
        return code, path, rest
    return None


def reply_gist(text: str) -> tuple[str | None, bool]:
    """The command a reply proposes (None: none) and whether it says the task is finished: what the
    context window shows of a folded reply."""
    parsed = parse_reply(text)
    return parsed.command, parsed.finished


def normalised(reply: str) -> str:
    """A reply with its whitespace evened out, to tell whether two replies say the same."""
    return " ".join(reply.split())


def echoes_own_lines(text: str, *, strict: bool = False) -> bool:
    """Whether a reply only copies agentcli's own lines back: it asks for no action, and it starts with
    one of them or its blocks hold nothing else (an observation's header and what followed it, or
    notes). `strict` as for `parse_reply`."""
    clean = _THINK.sub("", text)
    blocks = [block.body for block in find_blocks(clean) if block.body.strip()]
    if not _OWN_LINE.match(clean) and not (blocks and all(_copied_lines(body) for body in blocks)):
        return False
    parsed = parse_reply(text, strict=strict)
    return not (parsed.finished or parsed.command is not None or parsed.file_write is not None)


def _copied_lines(body: str) -> bool:
    """Whether a block holds an observation as agentcli shows it, or only agentcli's notes."""
    if OBSERVATION_HEADER.match(body):
        return True
    return all(_OWN_LINE.match(line) for line in body.splitlines() if line.strip())
