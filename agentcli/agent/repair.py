"""Turn commands that cannot work here into ones that do, and say so to the model.

Small models reach for interactive editors and pagers even when told not to; in a sandbox with
no terminal those hang or print noise. Showing the file instead keeps the run moving.
"""

from __future__ import annotations

import shlex

EDITORS = {"vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe", "gedit", "code"}
PAGERS = {"less", "more", "most"}


def repair(command: str) -> tuple[str, str | None]:
    """The command to run and, when it was changed, a note for the model."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command, None
    if not words or any(sep in command for sep in ("|", ";", "&&", "||", "\n", ">")):
        return command, None
    program = words[0].rsplit("/", 1)[-1]
    files = [w for w in words[1:] if not w.startswith(("-", "+"))]
    if program in EDITORS:
        shown = " ".join(shlex.quote(f) for f in files)
        note = (
            f"{program} is interactive and cannot run here, so the file is shown instead. To change a file, "
            "use `sed -i`, or write its path on a line followed by a fenced block with the new content."
        )
        return (f"cat -n {shown}" if files else "ls", note)
    if program in PAGERS and files:
        return f"cat -n {' '.join(shlex.quote(f) for f in files)}", f"{program} is a pager; used cat -n instead."
    return command, None
