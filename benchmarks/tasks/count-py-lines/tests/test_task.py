"""Outcome checks for count-py-lines."""

import os
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
SCRIPT = WORKDIR / "tools" / "count_py_lines.sh"


def make_tree(root: Path) -> int:
    """A small source tree; returns its number of .py lines."""
    files = {
        "main.py": 12,
        "pkg/__init__.py": 1,
        "pkg/core.py": 40,
        "pkg/sub dir/helpers module.py": 7,
        "pkg/deep/er/still.py": 3,
        "notes.txt": 100,
        "pkg/data.pyc.txt": 9,
        "README.md": 5,
    }
    for name, n in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"line {i}\n" for i in range(n)))
    return sum(n for name, n in files.items() if name.endswith(".py"))


def count(directory: Path):
    return subprocess.run(
        ["bash", str(SCRIPT), str(directory)], cwd=WORKDIR, capture_output=True, text=True, timeout=30
    )


def test_script_exists():
    assert SCRIPT.is_file()


def test_counts_lines_of_python_files(tmp_path):
    expected = make_tree(tmp_path / "project")
    proc = count(tmp_path / "project")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str(expected)


def test_other_directory(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    (one / "a.py").write_text("x = 1\ny = 2\n")
    proc = count(one)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "2"
