#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

path = Path("tags.py")
text = path.read_text()
text = text.replace(
    """    seen = set()
    for post in posts:
        for tag in post.get("tags", []):
            seen.add(normalize(tag))
    return list(seen)
""",
    """    seen: list[str] = []
    for post in posts:
        for tag in post.get("tags", []):
            tag = normalize(tag)
            if tag not in seen:
                seen.append(tag)
    return seen
""",
)
path.write_text(text)
PY
