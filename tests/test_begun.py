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
    assert change_start("conf.py", SOURCE, 4) == "conf.py\n```python\n" + head
    # Without a docstring, the signature; a definition on one line, or none at that line: the path alone.
    assert change_start("conf.py", SOURCE, 11) == "conf.py\n```python\nclass Rectangle:\n"
    assert change_start("conf.py", SOURCE, 16) == "conf.py\n```python\n"
    assert change_start("conf.py", SOURCE, 2) == "conf.py\n```python\n"
    assert change_start("conf.py", SOURCE, None) == "conf.py\n```python\n"
    assert change_start("backup.sh", "cp a b\n", None) == "backup.sh\n```bash\n"


def test_no_change_is_begun_in_data_tests_or_unknown_files() -> None:
    assert change_start("data/users.json", "[]", None) is None
    assert change_start("tests/test_conf.py", SOURCE, 4) is None
    assert change_start("README.md", "# x\n", None) is None
    assert change_start("broken.py", "def f(:\n", 1) == "broken.py\n```python\n"
