"""Realistic requests the agent's heuristics once got wrong: each must now let the right work through.

Most run `agentcli solve` end to end with a scripted model doing the right thing and assert that it
finishes unopposed (several guard against policies since deleted coming back); the rest call the text
readers that remain. The instructions are worded as a user would write them, not as any benchmark
task is.
"""

from __future__ import annotations

from pathlib import Path

from agentcli.session.outputs import named_outputs
from tests.conftest import committed_repo, git
from tests.test_solve import objections_in, solve_json


def _repo(tmp_path: Path, files: dict[str, str], *, commits: list[dict[str, str]] = ()) -> Path:
    repo = committed_repo(tmp_path / "repo", files)
    for change in commits:
        for name, text in change.items():
            (repo / name).write_text(text)
        git(repo, "commit", "-qam", "change")
    return repo


def _bash(command: str) -> str:
    return f"```bash\n{command}\n```"


def _finished(result, events) -> list[str]:
    """The run finished; what agentcli refused or objected to on the way."""
    assert result.returncode == 0, result.stderr
    assert events[-1]["status"] == "finished", events[-1]
    return objections_in(events)


def test_port_default_inside_single_quotes_is_written(tmp_path, write_replies):
    repo = _repo(tmp_path, {"start.sh": "#!/bin/sh\nexec python3 -m http.server 8000\n"})
    write = "printf '#!/bin/sh\\nexec python3 -m http.server \"${PORT:-8000}\"\\n' > start.sh"
    replies = [_bash(write), _bash("cat start.sh"), "DONE: start.sh reads PORT."]
    result, events = solve_json(repo, "Make start.sh use the PORT environment variable", write_replies(replies))
    assert not _finished(result, events)
    assert '"${PORT:-8000}"' in (repo / "start.sh").read_text()


def test_replaced_file_may_be_deleted(tmp_path, write_replies):
    repo = _repo(tmp_path, {"config.ini": "[app]\nname = demo\n", "app.py": "print('demo')\n"})
    replies = [
        'config.toml\n```toml\n[app]\nname = "demo"\n```',
        _bash("rm config.ini && ls"),
        "DONE: config.toml replaces config.ini.",
    ]
    result, events = solve_json(repo, "Replace config.ini with config.toml", write_replies(replies))
    assert not _finished(result, events)
    assert not (repo / "config.ini").exists() and (repo / "config.toml").exists()


def test_obsolete_file_is_removed_with_git_rm(tmp_path, write_replies):
    repo = _repo(tmp_path, {"old_utils.py": "def legacy():\n    pass\n", "main.py": "print('hi')\n"})
    replies = [_bash("git rm -q old_utils.py && git status --short"), "DONE: old_utils.py is gone."]
    result, events = solve_json(repo, "old_utils.py is obsolete", write_replies(replies))
    _finished(result, events)
    assert not (repo / "old_utils.py").exists()
    assert not any("--cached" in e.get("command", "") for e in events if e["type"] == "command_started")


def test_fixing_a_bad_commit_asks_for_no_new_commit(tmp_path, write_replies):
    good = "def login(user, password):\n    return password == 'secret'\n"
    repo = _repo(tmp_path, {"login.py": good}, commits=[{"login.py": good.replace("==", "!=")}])
    replies = [_bash("sed -i 's/!=/==/' login.py && cat login.py"), "DONE: login compares the password again."]
    result, events = solve_json(repo, "The last commit broke login; fix it", write_replies(replies))
    assert not _finished(result, events)
    assert "==" in (repo / "login.py").read_text()


def test_append_to_gitignore_beside_a_header_at_the_top(tmp_path, write_replies):
    repo = _repo(tmp_path, {"app.py": "print('app')\n", ".gitignore": "__pycache__/\n"})
    replies = [
        _bash("sed -i '1i # SPDX-License-Identifier: MIT' app.py && head -2 app.py"),
        _bash("echo '*.log' >> .gitignore && cat .gitignore"),
        "DONE: header added and *.log ignored.",
    ]
    task = "Add a license header at the top of app.py, and ignore *.log"
    result, events = solve_json(repo, task, write_replies(replies))
    assert not _finished(result, events)
    assert (repo / ".gitignore").read_text() == "__pycache__/\n*.log\n"
    assert (repo / "app.py").read_text().startswith("# SPDX-License-Identifier: MIT\n")


def test_same_key_in_another_toml_section_is_kept(tmp_path, write_replies):
    repo = _repo(tmp_path, {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n'})
    append = "printf '\\n[tool.black]\\nline-length = 100\\n' >> pyproject.toml && cat pyproject.toml"
    replies = [_bash(append), "DONE: black uses 100 columns too."]
    result, events = solve_json(repo, "Configure black to use a line length of 100", write_replies(replies))
    assert not _finished(result, events)
    assert "[tool.black]\nline-length = 100" in (repo / "pyproject.toml").read_text()


def test_failing_test_then_fix_is_no_tests_only_task():
    from agentcli.session.task_setup import only_tests

    assert not only_tests("Write a failing test reproducing issue 12, then fix it")
    assert only_tests("Write tests for slugify in text.py")
    assert not only_tests("Add caching to get_user() in users.py, and add a test for it.")
    assert not only_tests("Add input validation to the signup form so the new tests pass.")
    assert only_tests("Add unit tests covering the edge cases of parse_price (empty string, negative numbers).")


def test_missing_settings_file_the_program_reads_is_no_output():
    task = "report.py crashes when settings.toml is missing"
    code = "import tomllib\nwith open('settings.toml', 'rb') as f:\n    settings = tomllib.load(f)\n"
    assert named_outputs(task, ["report.py"], code) == []
    assert named_outputs("Write the totals to totals.csv", ["report.py"], code) == ["totals.csv"]


def test_placeholder_command_is_not_run_as_a_check(tmp_path, write_replies):
    todo = "import sys\n\nif sys.argv[1:2] == ['list']:\n    print('1 buy milk')\n"
    repo = _repo(tmp_path, {"todo.py": todo})
    done = todo + "elif sys.argv[1:2] == ['done'] and len(sys.argv) == 3:\n    print('done', sys.argv[2])\n"
    replies = [f"todo.py\n```python\n{done}```", _bash("python3 todo.py done 1"), "DONE: `done ID` marks an item."]
    task = "Add a `done` subcommand: `python3 todo.py done ID` marks the item with that ID as done."
    result, events = solve_json(repo, task, write_replies(replies))
    assert not _finished(result, events)
    assert (repo / "todo.py").read_text() == done


# Found by a hunt over some 90 realistic requests (none of them a benchmark task's).


def test_a_quoted_command_that_deletes_files_is_not_run_unasked(tmp_path, write_replies):
    cleanup = "#!/bin/sh\nrm -rf ./*\n"
    repo = _repo(tmp_path, {"cleanup.sh": cleanup, "app.py": "print('app')\n", "data.txt": "keep me\n"})
    (repo / "cleanup.sh").chmod(0o755)
    (repo / "notes.txt").write_text("the user's own, uncommitted\n")
    fix = "cleanup.sh\n```bash\n#!/bin/sh\nrm -rf ./build\n```"
    replies = [fix, _bash("cat cleanup.sh"), "DONE: cleanup.sh removes build/ only."]
    task = "`./cleanup.sh` deletes everything in the current directory instead of just build/. Fix it!"
    _, events = solve_json(repo, task, write_replies(replies))
    assert not [e for e in events if e["type"] == "command_started" and e["step"] == 0]
    assert (repo / "data.txt").read_text() == "keep me\n" and (repo / "notes.txt").is_file()
    assert (repo / "app.py").is_file()


def test_an_exit_status_the_task_asks_for_is_no_failure(tmp_path, write_replies):
    crash = "import sys\nport = int(sys.argv[2])\nprint(port)\n"
    repo = _repo(tmp_path, {"cli.py": crash})
    fixed = (
        "cli.py\n```python\nimport sys\n\ntry:\n    port = int(sys.argv[2])\nexcept ValueError:\n"
        "    print('usage: cli.py --port NUMBER', file=sys.stderr)\n    sys.exit(2)\nprint(port)\n```"
    )
    replies = [fixed, _bash("python3 cli.py --port abc; echo $?"), "DONE: a usage message and exit 2."]
    task = "Make `python3 cli.py --port abc` exit with status 2 and a usage message instead of a traceback."
    result, events = solve_json(repo, task, write_replies(replies))
    assert not _finished(result, events)


def test_output_the_command_printed_before_the_task_is_no_expectation(tmp_path, write_replies):
    repo = _repo(tmp_path, {"calc.py": "import sys\nprint(int(sys.argv[2]) + int(sys.argv[3]) + 1)\n"})
    replies = [_bash("sed -i 's/ + 1)/)/' calc.py && python3 calc.py add 2 2"), "DONE: 2 + 2 is 4 again."]
    task = "`python3 calc.py add 2 2` prints `5`. The off-by-one is in calc.py; fix it."
    result, events = solve_json(repo, task, write_replies(replies))
    assert not _finished(result, events)


def test_files_the_task_says_to_ignore_or_not_to_create_are_no_outputs():
    assert named_outputs("Please ignore npm-debug.log and coverage.xml in git.", ["app.py"]) == []
    assert named_outputs("Don't create a new settings.yaml; put the defaults in config.py", ["config.py"]) == []
