"""Outcome checks for fix-shell-injection.

The script runs with cwd = a temporary folder (not the work dir) so that an
injected command can only ever touch that folder.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def make_files(folder: Path, names: dict[str, str]) -> None:
    for name, text in names.items():
        (folder / name).write_text(text)


def run(folder: Path, names):
    return subprocess.run(
        [sys.executable, str(WORKDIR / "filestats.py"), *names],
        cwd=folder,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
    )


def expected(folder: Path, names):
    lines = []
    for name in names:
        data = (folder / name).read_bytes()
        newlines = data.count(b"\n")
        lines.append(f"{newlines} {hashlib.sha256(data).hexdigest()} {name}")
    return lines


def test_plain_names(tmp_path):
    files = {"a.txt": "one\ntwo\nthree\n", "b.log": "x\n"}
    make_files(tmp_path, files)
    proc = run(tmp_path, list(files))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == expected(tmp_path, list(files))


def test_awkward_names(tmp_path):
    files = {"my report.txt": "a\nb\n", "it's done.txt": "c\n", 'say "hi".txt': "d\ne\nf\n", "semi;colon.txt": "g\n"}
    make_files(tmp_path, files)
    proc = run(tmp_path, list(files))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == expected(tmp_path, list(files))


def test_no_command_injection(tmp_path):
    files = {
        "x;touch pwned1;.txt": "1\n",
        "$(touch pwned2).txt": "2\n2\n",
        "`touch pwned3`.txt": "3\n",
        "a|touch pwned4.txt": "4\n",
        "b && touch pwned5.txt": "5\n",
    }
    make_files(tmp_path, files)
    proc = run(tmp_path, list(files))
    created = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned"))
    assert not created, f"file names were run as shell commands: created {created}"
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == expected(tmp_path, list(files))
