"""Outcome checks for write-missing-test: the new tests pass, and catch a broken module."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
TEST_FILE = Path("tests") / "test_textstats.py"
RUNNER = Path(__file__).parent / "data" / "run_variants.py"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
# Each mutant breaks one function and leaves the other working, so both need a test.
MUTANTS = {
    "word_frequencies returns nothing": (
        "\n\n_original_word_frequencies = word_frequencies\n\n\n"
        "def top_words(text, n=3):\n"
        "    counts = _original_word_frequencies(text)\n"
        "    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]\n\n\n"
        "def word_frequencies(text):\n"
        "    return {}\n"
    ),
    "top_words returns nothing": "\n\ndef top_words(text, n=3):\n    return []\n",
}


def copy_of_workdir(dest: Path) -> Path:
    shutil.copytree(WORKDIR, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache"))
    return dest


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Exit status of the agent's tests on an intact copy and on one broken copy per mutant."""
    if not (WORKDIR / TEST_FILE).is_file():
        pytest.fail(f"{TEST_FILE} does not exist")
    names = [None, *sorted(MUTANTS)]
    copies = []
    for name in names:
        copy = copy_of_workdir(tmp_path_factory.mktemp("run") / "work")
        if name is not None:
            module = copy / "textstats.py"
            module.write_text(module.read_text() + MUTANTS[name])
        copies.append(str(copy))
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(TEST_FILE), *copies],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-2000:]
    statuses = json.loads(lines[-1])
    return {name: (rc, proc.stdout) for name, rc in zip(names, statuses, strict=True)}


def test_file_exists_and_covers_both_functions():
    path = WORKDIR / TEST_FILE
    assert path.is_file()
    text = path.read_text()
    assert "word_frequencies" in text
    assert "top_words" in text


def test_new_tests_pass(runs):
    rc, out = runs[None]
    assert rc == 0, out[-2000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed.group(1)) >= 2, out[-2000:]


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_new_tests_catch_a_broken_module(runs, mutant):
    rc, out = runs[mutant]
    assert rc == 1, f"tests did not fail when {mutant}:\n{out[-2000:]}"
