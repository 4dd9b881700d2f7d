"""The program a script's `#!` line names: `#!/usr/bin/env -S bash -e` runs bash, `#!/bin/zsh` zsh."""

from __future__ import annotations

# Bytes of a file read for its `#!` line.
HEAD_BYTES = 256


def interpreter(head: bytes) -> str | None:
    """The name of the program the first line of `head` runs the script with (`python3`, `bash`), or
    None when it has no `#!` line. Through `env`, the first word that is no option or assignment."""
    first = head.split(b"\n", 1)[0]
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", errors="replace").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return words[0].rsplit("/", 1)[-1] if words else None
