"""Run one pytest file in several copies of a project, in one interpreter (pytest starts once).

Usage: python3 run_variants.py TEST_FILE DIR [DIR ...]
Prints each run's output, then a last line with the JSON list of exit statuses.
"""

import json
import os
import sys

import pytest


def forget_modules_under(root: str) -> None:
    """Drop modules imported from `root`, so the next copy's code is imported afresh."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(root + os.sep):
            del sys.modules[name]


def main(argv: list[str]) -> int:
    test_file, dirs = argv[0], argv[1:]
    statuses = []
    for directory in dirs:
        root = os.path.realpath(directory)
        os.chdir(root)
        sys.path.insert(0, root)  # as `python3 -m pytest` run from the project root would
        try:
            statuses.append(int(pytest.main(["-q", "-p", "no:cacheprovider", test_file])))
        finally:
            sys.path.remove(root)
            forget_modules_under(root)
        print(flush=True)
    print(json.dumps(statuses))
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
