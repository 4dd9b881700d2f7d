"""The program a script's `#!` line names: `#!/usr/bin/env -S bash -e` runs bash, `#!/bin/zsh` zsh."""

from __future__ import annotations

# Bytes of a file read for its `#!` line.
HEAD_BYTES = 256
# `env` options whose value is the next word: `env -u VAR bash`, `env -C /tmp bash`.
_ENV_TAKES_ARGUMENT = frozenset({"-u", "-C", "--unset", "--chdir"})


def interpreter(head: bytes) -> str | None:
    """The name of the program the first line of `head` runs the script with (`python3`, `bash`), or
    None when it has no `#!` line. Through `env`, the first word that is no option or assignment."""
    first = head.split(b"\n", 1)[0]
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", errors="replace").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        rest, words = words[1:], []
        while rest:
            word = rest.pop(0)
            if word in _ENV_TAKES_ARGUMENT:
                rest = rest[1:]
            elif not word.startswith("-") and "=" not in word:
                words = [word]
                break
    return words[0].rsplit("/", 1)[-1] if words else None
