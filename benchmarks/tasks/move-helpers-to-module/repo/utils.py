"""Assorted helpers for the blog generator."""

import json
import re
from pathlib import Path


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, data):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def slugify(title):
    """'Hello, World!' -> 'hello-world'"""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower())
    return slug.strip("-")


def truncate(text, limit=60):
    """Cut text to at most `limit` characters, ending with '...' when it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 3].rstrip() + "..."
