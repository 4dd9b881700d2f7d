"""Read release headings from a Keep-a-Changelog style CHANGELOG.md.

Usage: python3 changelog.py CHANGELOG.md   prints the latest released version
"""

import re
import sys

HEADING = re.compile(r"^## \[(\d)\.(\d)\.(\d)\] - (\d{4}-\d{2}-\d{2})\s*$")


def releases(text: str) -> list[tuple[tuple[int, int, int], str]]:
    """Every release heading as ((major, minor, patch), date), in file order.
    The "## [Unreleased]" section is not a release."""
    found = []
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            found.append(((int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group(4)))
    return found


def latest(text: str) -> str:
    version, _date = max(releases(text))
    return ".".join(str(part) for part in version)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        print(latest(f.read()))
