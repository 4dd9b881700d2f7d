"""A result printed where the task asks for it in a file.

Asked to write config/merged.json, a small model works the merge out, prints it with
`python3 -c "print(json.dumps(...))"`, sees the right JSON on the screen, and says done with the
file still empty. When a command prints text of the asked file's kind (JSON, CSV) that the file
does not hold, the observation says so and gives the same command with its output redirected there.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable

from agentcli.prompts import render

# The command writes the file itself: its output goes there, not to the screen.
_WRITES = r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?{path}['\"]?(?![\w./-])"
_HEREDOC_START = re.compile(r"<<-?\s*['\"]?\w+['\"]?\s*$")


def _json_result(text: str) -> object | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) and value else None


def _csv_result(text: str) -> list[str] | None:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return None
    commas = lines[0].count(",")
    return lines if all(line.count(",") == commas for line in lines) else None


def _same_result(path: str, printed: str, held: str) -> bool | None:
    """Whether `held` (the file's text) already is the `printed` result; None when `printed` is no
    result of the file's kind."""
    if path.endswith(".json"):
        value = _json_result(printed.strip())
        if value is None:
            return None
        try:
            return json.loads(held) == value
        except ValueError:
            return False
    if path.endswith(".csv"):
        lines = _csv_result(printed)
        if lines is None:
            return None
        return [line.strip() for line in held.strip().splitlines() if line.strip()] == [line.strip() for line in lines]
    return None


def redirected(command: str, path: str) -> str:
    """`command` with what it prints going to `path`."""
    target = shlex.quote(path)
    lines = command.strip().splitlines()
    if len(lines) == 1:
        return f"{lines[0]} > {target}"
    if _HEREDOC_START.search(lines[0]):  # `python3 - <<'EOF'`: the redirection goes on the first line
        return "\n".join([f"{lines[0]} > {target}", *lines[1:]])
    return "\n".join(["{", *lines, f"}} > {target}"])


_NAMED_FILE = re.compile(r"[\w./-]+\.\w+")


def _shows_a_file(command: str, output: str, read: Callable[[str], str | None]) -> bool:
    """Whether `output` is the text of a file `command` names (`cat config/defaults.json`): a look at
    the input, not a result."""
    for name in _NAMED_FILE.findall(command):
        text = read(name)
        if text is not None and _same_result(name, output, text):
            return True
    return False


def printed_not_written(command: str, output: str, asked: list[str], read: Callable[[str], str | None]) -> str | None:
    """A note when `command` printed, rather than wrote, the result an asked file should hold."""
    for path in asked:
        if re.search(_WRITES.format(path=re.escape(path)), command) or _shows_a_file(command, output, read):
            continue
        held = read(path) or ""
        if _same_result(path, output, held) is False:
            return render("notes/printed_not_written", path=path, command=redirected(command, path))
    return None
