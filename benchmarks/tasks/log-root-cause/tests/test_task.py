"""Outcome checks for log-root-cause."""

import os
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ROOT_CAUSE = (
    "2024-03-12 02:04:35.284 ERROR [storage] failed to write chunk-0043.parquet: "
    "[Errno 28] No space left on device: '/var/lib/export/tmp/chunk-0043.parquet'"
)


def test_answer_is_the_root_cause_line():
    answer = WORKDIR / "root_cause.txt"
    assert answer.is_file()
    lines = [line.strip() for line in answer.read_text().splitlines() if line.strip()]
    assert lines == [ROOT_CAUSE]
