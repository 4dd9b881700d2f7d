"""File edits given as a path and a block: whole files, and Python definitions spliced into a file."""

from __future__ import annotations

import subprocess

from agentcli.agent.edits import describe_change, merge_python, new_content, write_command
from agentcli.agent.parsing import parse_reply

ORIGINAL = '''"""Calc."""
import os


def add(a, b):
    return a - b


@staticmethod
def mul(a, b):
    return a * b


class Shape:
    def area(self):
        return 0

    def name(self):
        return "shape"
'''


def test_function_replaced_rest_kept():
    merged = merge_python(ORIGINAL, "def add(a, b):\n    return a + b\n")
    assert merged == ORIGINAL.replace("return a - b", "return a + b")


def test_decorators_kept_when_the_block_has_none():
    merged = merge_python(ORIGINAL, "def mul(a, b):\n    return b * a\n")
    assert "@staticmethod\ndef mul(a, b):\n    return b * a" in merged and merged.count("def mul") == 1


def test_method_merged_into_its_class():
    merged = merge_python(ORIGINAL, "class Shape:\n    def area(self):\n        return 1\n")
    assert "return 1" in merged and 'return "shape"' in merged and merged.count("class Shape") == 1


def test_bare_indented_method_found_in_its_class():
    merged = merge_python(ORIGINAL, "    def name(self):\n        return 'square'\n")
    assert "        return 'square'" in merged and "return 0" in merged


def test_new_function_and_import_added():
    merged = merge_python(ORIGINAL, "import sys\n\n\ndef sub(a, b):\n    return a - b\n")
    assert merged.index("import sys") < merged.index("def add") and merged.rstrip().endswith("return a - b")


def test_a_new_value_of_a_top_level_name_replaces_its_assignment():
    # env-port-default: the block holds the import and the new `PORT = ...` line, nothing else.
    original = 'import sys\n\nHOST = "127.0.0.1"\nPORT = 8000\n\n\ndef address():\n    return (HOST, PORT)\n'
    merged = merge_python(original, 'import os\n\nPORT = int(os.environ.get("PORT", 8000))\n')
    assert merged == original.replace("import sys\n", "import sys\nimport os\n").replace(
        "PORT = 8000", 'PORT = int(os.environ.get("PORT", 8000))'
    )
    # a name the file does not bind is no edit of it
    assert merge_python(original, "TIMEOUT = 30\n") is None


def test_whole_file_is_not_merged():
    whole = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\nclass Shape:\n    pass\n"
    assert merge_python(ORIGINAL, whole) is None
    assert merge_python(ORIGINAL, "print('script')\n") is None
    assert merge_python(ORIGINAL, "def broken(:\n") is None


def test_new_content_and_diff():
    content, how = new_content("calc.py", ORIGINAL, "def add(a, b):\n    return a + b\n")
    assert "updated the definitions" in how and "def mul" in content
    assert "+    return a + b" in describe_change("calc.py", ORIGINAL, content)
    assert new_content("new.txt", None, "hi\n") == ("hi\n", "created new.txt")


def test_write_command_writes_exactly(tmp_path):
    content = "line with AGENTCLI_EOF inside\n$HOME `x` 'q'\n"
    command = write_command("sub/dir/f.txt", content)
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "sub/dir/f.txt").read_text() == content


def test_parser_reads_file_blocks():
    assert parse_reply("Here is the fixed `calc.py`:\n```python\nx = 1\n```").file_write == ("calc.py", "x = 1\n")
    assert parse_reply("```python\n# file: pkg/mod.py\nx = 1\n```").file_write == ("pkg/mod.py", "x = 1\n")
    assert parse_reply("backup.sh:\n```bash\n#!/bin/bash\necho hi\n```").file_write[0] == "backup.sh"
    assert parse_reply("Let me look at calc.py:\n```bash\ncat calc.py\n```").command == "cat calc.py"
    assert parse_reply("Write /etc/passwd:\n```text\nx\n```").file_write in (None, ("", "x\n"))


def test_unlabelled_block_under_a_file_name_is_content_unless_it_is_a_command():
    assert parse_reply("hello.txt:\n```\nhello world\n```").file_write == ("hello.txt", "hello world\n")
    looked = parse_reply("Let me look at calc.py\n```\ncat calc.py\n```")
    assert looked.file_write is None and looked.command == "cat calc.py"
    assert parse_reply("Run calc.py to check:\n```\npython3 calc.py\n```").command == "python3 calc.py"


def test_a_function_is_spliced_into_a_file_an_earlier_edit_broke():
    broken = (
        '"""Pages."""\n\n\n@cache\ndef page_count(total, per_page):\n    if per_page <= 0:\n'
        "        raise ValueError('no') if per_page > 0\n    return total // per_page\n\n\n"
        "def paginate(items, page, per_page):\n    return items[page * per_page :]\n"
    )
    block = "def page_count(total, per_page):\n    if per_page <= 0:\n        raise ValueError('no')\n    return 1\n"
    content, how = new_content("pager.py", broken, block)
    assert how.startswith("updated the definitions in pager.py")
    assert content == (
        '"""Pages."""\n\n\n@cache\n'
        + block
        + "\n\ndef paginate(items, page, per_page):\n    return items[page * per_page :]\n"
    )


def test_the_one_class_of_a_file_written_with_only_a_changed_method_is_spliced():
    original = (
        '"""Shapes."""\n\n\nclass Rectangle:\n    """A rectangle."""\n\n    def __init__(self, w, h):\n'
        "        self.w = w\n        self.h = h\n\n    def area(self):\n        return self.w * self.h\n"
    )
    block = "class Rectangle:\n    def __init__(self, w, h):\n        if w <= 0:\n            raise ValueError(w)\n"
    block += "        self.w = w\n        self.h = h\n"
    merged = merge_python(original, block)
    assert merged is not None and "def area(self):" in merged and '"""A rectangle."""' in merged
    assert "        if w <= 0:\n            raise ValueError(w)\n" in merged
