"""What a command writes, deletes or runs, read from its text."""

from __future__ import annotations

import pytest

from agentcli.agent.checking import (
    check_command,
    command_lines,
    only_changes,
    overwrites,
)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo debug.log > .gitignore", [(".gitignore", "echo")]),
        ("echo x >> a.txt", []),  # an append
        ("ls 2>err.txt", []),  # stderr
        ('echo "a > b" > f.txt', [("f.txt", "echo")]),  # a quoted > is text
        ("cat > greet.py <<'EOF'\nx > y\nEOF", [("greet.py", "cat")]),  # the body is data
        ("sort -u c.csv > c.csv && wc -l c.csv", [("c.csv", "sort")]),
        ("> log", []),  # empties the file on purpose
        (": > log", []),
        ("python3 x.py >&2", []),
        ('echo hi > "my file"', [("my file", "echo")]),
    ],
)
def test_overwrites(command: str, expected: list[tuple[str, str]]):
    assert overwrites(command) == expected


def test_what_follows_a_here_document_still_counts():
    command = "cat > app.py <<'EOF'\nprint(1)\nEOF\npython3 app.py"
    assert not only_changes(command)
    assert check_command("cat > app.py <<'EOF'\nprint(1)\nEOF") == "cat -n app.py"


@pytest.mark.parametrize(
    ("command", "look"),
    [
        ("printf x > a.txt 2>/dev/null", "cat -n a.txt"),  # stderr's redirect is no file written
        ('echo "a > b" > c.txt', "cat -n c.txt"),
        ('echo a >> "my notes.txt"', "cat -n 'my notes.txt'"),
    ],
)
def test_the_look_after_a_write_shows_the_file_written(command: str, look: str):
    assert check_command(command) == look


def test_a_redirect_in_quotes_or_to_dev_null_writes_nothing():
    assert not only_changes('echo "a > b"') and not only_changes("python3 app.py > /dev/null")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git rm --cached debug.log\necho debug.log >> .gitignore\ngit add .\ngit commit -m m", 4),
        ("cd src && ls", 1),
        ("# look\nls\n\n", 1),
        ("for f in *; do\n  echo $f\ndone", 1),
        ("cat > a.py <<EOF\nx\ny\nEOF", 1),
        ("ls \\\n  -la", 1),
    ],
)
def test_command_lines(command: str, expected: int):
    assert command_lines(command) == expected
