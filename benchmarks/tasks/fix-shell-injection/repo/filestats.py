"""Print line count and SHA-256 checksum of the files given on the command line.

Usage: python3 filestats.py FILE...
Output: one line per file, "<lines> <sha256> <file name>".
"""

import subprocess
import sys


def line_count(path: str) -> int:
    out = subprocess.run(f"wc -l < {path}", shell=True, capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def checksum(path: str) -> str:
    out = subprocess.run(f"sha256sum {path}", shell=True, capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def main(paths: list[str]) -> int:
    for path in paths:
        print(f"{line_count(path)} {checksum(path)} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
