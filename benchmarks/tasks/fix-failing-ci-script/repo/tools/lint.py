"""Tiny style checker used by ci.sh.

Checks every .py file under the given folders: no tab characters, no trailing
whitespace, lines of at most 100 characters, and a newline at the end of the file.
"""

import sys
from pathlib import Path

MAX_LINE = 100


def check_file(path: Path) -> list[str]:
    problems = []
    text = path.read_text()
    for number, line in enumerate(text.splitlines(), start=1):
        if "\t" in line:
            problems.append(f"{path}:{number}: tab character")
        if line != line.rstrip():
            problems.append(f"{path}:{number}: trailing whitespace")
        if len(line) > MAX_LINE:
            problems.append(f"{path}:{number}: line longer than {MAX_LINE} characters")
    if text and not text.endswith("\n"):
        problems.append(f"{path}: no newline at end of file")
    return problems


def main(folders: list[str]) -> int:
    problems = []
    for folder in folders or ["."]:
        for path in sorted(Path(folder).rglob("*.py")):
            problems.extend(check_file(path))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
