"""Print the number of lines, words and characters read from standard input."""

import sys


def main() -> None:
    text = sys.stdin.read()
    print(len(text.splitlines()), len(text.split()), len(text))


if __name__ == "__main__":
    main()
