"""Resize images listed on the command line (dry run: only logs what it would do)."""

import logging
import sys

logging.basicConfig(filename="debug.log", level=logging.DEBUG)


def main(paths: list[str]) -> int:
    for path in paths:
        logging.debug("would resize %s", path)
    print(f"{len(paths)} image(s) queued")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
