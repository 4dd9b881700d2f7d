"""Commands repaired before they run: Python one-liners that cannot parse, editors and pagers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.repair import one_line_python, repair
from agentcli.events import EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for

CONVERT = (
    "import json; import csv; with open('users.json') as f, open('users.csv', 'w', newline='') as out: "
    "users = json.load(f); writer = csv.writer(out); writer.writerow(['id', 'name']); "
    "for user in users: writer.writerow([user['id'], user['name']])"
)


def test_a_one_liner_with_compound_statements_runs_as_the_script_it_means(tmp_path: Path):
    (tmp_path / "users.json").write_text(json.dumps([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bo: b"}]))
    command = f'# Step 1: convert\npython -c "{CONVERT}"'
    model = ScriptedModel([f"```bash\n{command}\n```", "DONE: converted"])
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        Agent(model, box, EventBus()).run("convert users.json to users.csv")
    assert (tmp_path / "users.csv").read_text().splitlines() == ["id,name", "1,Ada", "2,Bo: b"]
    observation = model.calls[1][-1]["content"]
    assert "so your one-liner ran as this script" in observation
    assert "    for user in users:\n        writer.writerow([user['id'], user['name']])" in observation


@pytest.mark.parametrize(
    "command",
    [
        'python3 -c "print(1); print(2)"',  # parses: left alone
        'python3 -c "x = 1; if x: print(1); else: print(2)"',  # where the else belongs is a guess
        'python3 -c "import os; for f in os.listdir(): print(f)" | sort',  # more than the one-liner
        'python3 -c "import os; for f in os.listdir(): print(f)" > a b',
        "python3 app.py",
    ],
)
def test_commands_left_as_they_are(command: str):
    assert one_line_python(command) is None


COUNT = (
    "import os, re; count = 0; for root, dirs, files in os.walk('src'): for name in files: "
    "if name.endswith('.py'): with open(os.path.join(root, name)) as f: for line in f: "
    "if re.search(r'TODO', line): count += 1{sep}print(count)"
)


@pytest.mark.parametrize("separator", ["; ", " "])  # the `;` before the print is often left out
def test_a_total_counted_in_loops_is_printed_once_and_may_go_to_a_file(tmp_path: Path, separator: str):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("# TODO: one\nx = 1  # TODO: two\n")
    (tmp_path / "src" / "pkg" / "b.py").write_text("# TODO: three\n")
    (tmp_path / "src" / "notes.txt").write_text("TODO: not Python\n")
    command = f'python -c "{COUNT.format(sep=separator)}" > count.txt'
    run, note = one_line_python(command) or ("", "")
    assert (
        "                    if re.search(r'TODO', line):\n                        count += 1\nprint(count)\n" in note
    )
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        assert box.run(run).ok
    assert (tmp_path / "count.txt").read_text() == "3\n"


def test_a_print_of_something_else_stays_in_its_loop():
    command = """python3 -c "import os; for name in os.listdir(): if name.endswith('.py'): print(name)" """
    script, _ = one_line_python(command) or ("", "")
    assert "    if name.endswith('.py'):\n        print(name)\n" in script


def test_brackets_strings_and_lambdas_keep_their_colons():
    command = """python3 -c "d = {'a': 2}; for k in sorted(d, key=lambda k: d[k]): print(f'{k}: {d[k]}')" """
    script, _ = one_line_python(command) or ("", "")
    assert "for k in sorted(d, key=lambda k: d[k]):\n    print(f'{k}: {d[k]}')\n" in script


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("cd /path/to/your/project/directory && sed -i 's/a/b/' f.py", "sed -i 's/a/b/' f.py"),
        ("cd your_project; ls", "ls"),
        ("cd /path/to/repo", "pwd"),
        ("cd src && ls", "cd src && ls"),  # a real folder name is left alone
    ],
)
def test_a_placeholder_cd_is_dropped(command: str, runs: str):
    assert repair(command)[0] == runs


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("vim textstats.py", "cat -n textstats.py"),
        ("# Open textstats.py and find the function\nnano textstats.py", "cat -n textstats.py"),
        ("less app.log", "cat -n app.log"),
        ("nano", "ls"),
    ],
)
def test_an_editor_or_pager_shows_the_file_instead(command: str, runs: str):
    repaired, note = repair(command)
    assert repaired == runs and note is not None


@pytest.mark.parametrize(
    "program",
    [
        # json-to-csv: the shell reads `newline=''` as the end of the quoted program and `)` after it.
        'import json, csv; with open("users.json") as f, open("users.csv", "w", newline=\'\') as out: '
        'w = csv.writer(out); w.writerow(["id", "name"]); '
        'for u in json.load(f): w.writerow([u["id"], u["name"]])',
        'import json, csv; rows = json.load(open("users.json")); out = open("users.csv", "w", newline=\'\'); '
        'w = csv.writer(out); w.writerow(["id", "name"]); w.writerows([[u["id"], u["name"]] for u in rows])',
    ],
)
def test_quotes_inside_a_single_quoted_one_liner_are_the_programs_own(tmp_path: Path, program: str):
    (tmp_path / "users.json").write_text(json.dumps([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bo"}]))
    run, note = one_line_python(f"python -c '{program}'") or ("", "")
    assert "ran as this script" in note
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        assert box.run(run).ok
    assert (tmp_path / "users.csv").read_text().splitlines() == ["id,name", "1,Ada", "2,Bo"]


def test_a_shell_command_in_a_python_block_runs_as_the_command(tmp_path: Path):
    (tmp_path / "users.json").write_text(json.dumps([{"id": 1, "name": "Ada"}]))
    program = 'import json; print(json.load(open("users.json"))[0]["name"], end=\'\')'
    model = ScriptedModel([f"```python\npython -c '{program}'\n```", "DONE: printed"])
    with HostSandbox(tmp_path, channel_for(tmp_path)) as box:
        Agent(model, box, EventBus()).run("print the first name")
    observation = model.calls[1][-1]["content"]
    assert "[exit 0" in observation and "Ada" in observation
    assert "holds a shell command, not Python, so it ran as one" in observation
