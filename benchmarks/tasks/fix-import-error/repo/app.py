"""Print a URL slug for each title given on the command line."""

import sys

from textutils import slugify


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: app.py TITLE [TITLE ...]", file=sys.stderr)
        return 2
    for title in argv:
        print(slugify(title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
