"""Text helpers."""

import re


def slugify(title: str) -> str:
    """Lower-case `title` and join its words with hyphens: "Hello World!" -> "hello-world"."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)


def truncate(text: str, width: int) -> str:
    """Cut `text` to at most `width` characters, ending with "..." when cut."""
    if len(text) <= width:
        return text
    return text[: max(width - 3, 0)] + "..."
