"""Outcome checks for write-missing-test: the new tests pass, and catch a broken module."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
TEST_FILE = Path("tests") / "test_textstats.py"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
MUTANTS = {
    "word_frequencies returns nothing": "\n\ndef word_frequencies(text):\n    return {}\n",
    "top_words returns nothing": "\n\ndef top_words(text, n=3):\n    return []\n",
}


def copy_of_workdir(dest: Path) -> Path:
    shutil.copytree(WORKDIR, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache"))
    return dest


def run_agent_tests(copy: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TEST_FILE)],
        cwd=copy,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_file_exists_and_covers_both_functions():
    path = WORKDIR / TEST_FILE
    assert path.is_file()
    text = path.read_text()
    assert "word_frequencies" in text
    assert "top_words" in text


def test_new_tests_pass(tmp_path):
    assert (WORKDIR / TEST_FILE).is_file()
    proc = run_agent_tests(copy_of_workdir(tmp_path / "work"))
    assert proc.returncode == 0, proc.stdout[-2000:]
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed and int(passed.group(1)) >= 2, proc.stdout[-2000:]


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_new_tests_catch_a_broken_module(tmp_path, mutant):
    assert (WORKDIR / TEST_FILE).is_file()
    copy = copy_of_workdir(tmp_path / "work")
    module = copy / "textstats.py"
    module.write_text(module.read_text() + MUTANTS[mutant])
    proc = run_agent_tests(copy)
    assert proc.returncode == 1, f"tests did not fail when {mutant}:\n{proc.stdout[-2000:]}"
