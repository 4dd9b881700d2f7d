"""Where a reply is begun for the model, and with what (agent.begun)."""

from __future__ import annotations

from agentcli.agent.begun import change_start, read_file

SOURCE = (
    "import os\n\n\n"
    "@cache\n"
    "def load(path: str,\n         strict: bool = False) -> dict:\n"
    '    """Read the settings at `path`."""\n'
    "    raise NotImplementedError\n\n\n"
    "class Rectangle:\n    def __init__(self, w, h):\n        self.w = w\n\n\n"
    "def one(): return 1\n"
)


def test_reads_of_one_file_and_the_line_they_show_from() -> None:
    assert read_file("cat durations.py") == ("durations.py", None)
    assert read_file("cat -n ./pkg/mod.py | sed -n '16,30p'") == ("pkg/mod.py", 16)
    assert read_file("sed -n '5,9p' app.py") == ("app.py", 5)
    assert read_file("head -n 20 app.py") == ("app.py", None)
    assert read_file("cat a.py b.py") is None
    assert read_file("python3 app.py") is None
    assert read_file("cat app.py | grep x") is None


def test_a_change_begins_with_the_definition_down_to_its_docstring() -> None:
    head = SOURCE.split("\n\n\n")[1].removesuffix("    raise NotImplementedError")
    assert change_start("conf.py", SOURCE, 4).text == "conf.py\n```python\n" + head
    assert change_start("conf.py", SOURCE, 8).text == "conf.py\n```python\n" + head  # a line of its body
    # A method: its class's line, then the method's signature (it has no docstring).
    method = "class Rectangle:\n    def __init__(self, w, h):\n"
    assert change_start("conf.py", SOURCE, 13).text == "conf.py\n```python\n" + method
    assert change_start("conf.py", SOURCE, 11).text == "conf.py\n```python\nclass Rectangle:\n"
    # A definition on one line, a line outside any, or no line: the path and the block's opening.
    assert change_start("conf.py", SOURCE, 16).text == "conf.py\n```python\n"
    assert change_start("conf.py", SOURCE, 2).text == "conf.py\n```python\n"
    assert change_start("conf.py", SOURCE, None).text == "conf.py\n```python\n"
    # A shell script's block starts as a script (else it is a command to run): its own `#!` line.
    assert change_start("backup.sh", "cp a b\n", None).text == "backup.sh\n```bash\n#!/bin/bash\n"
    assert change_start("run.sh", "#!/bin/sh\nls\n", None).text == "run.sh\n```bash\n#!/bin/sh\n"
    # The blank line after a class's docstring is the file's own spacing, kept.
    shape = 'class Shape:\n    """A shape."""\n\n    def area(self):\n        return 0\n'
    assert change_start("shape.py", shape, 1).text == 'shape.py\n```python\nclass Shape:\n    """A shape."""\n\n'
    # Whether the block that follows is one definition's change, not the whole file.
    assert [change_start("conf.py", SOURCE, line).definition for line in (4, 13, 11, 16, 2)] == [1, 1, 1, 0, 0]


def test_no_change_is_begun_in_data_tests_or_unknown_files() -> None:
    assert change_start("data/users.json", "[]", None) is None
    assert change_start("tests/test_conf.py", SOURCE, 4) is None
    assert change_start("README.md", "# x\n", None) is None
    assert change_start("broken.py", "def f(:\n", 1).text == "broken.py\n```python\n"
