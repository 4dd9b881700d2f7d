"""The files a task asks to be written."""

import pytest

from agentcli.session.outputs import named_outputs


@pytest.mark.parametrize(
    ("task", "outputs"),
    [
        ("Find the cause in logs/export.log and write the ERROR line to root_cause.txt.", ["root_cause.txt"]),
        ("Convert data/users.json to data/users.csv: a header row, then one row per user", ["data/users.csv"]),
        ("Write config/merged.json from config/defaults.json, with local.json on top", ["config/merged.json"]),
        ("I want to run it as `./scripts/wordcount.py < file.txt`", []),  # an example in a command
        ("Bump the version to 1.5.0 in README.md, e.g. in its first line", []),
        ("Stop tracking app.py, add it to .gitignore and commit", [".gitignore"]),  # a dotfile is a file
    ],
)
def test_files_the_task_asks_for_are_the_named_ones_not_here(task, outputs):
    files = ["logs/export.log", "data/users.json", "config/defaults.json", "config/local.json", "app.py", "README.md"]
    assert named_outputs(task, files) == outputs
