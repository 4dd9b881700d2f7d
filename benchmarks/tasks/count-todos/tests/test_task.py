"""Outcome checks for count-todos."""

import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])


def test_answer_file_has_the_count():
    answer = WORKDIR / "todo_count.txt"
    assert answer.is_file()
    assert answer.read_text().strip() == "7"
