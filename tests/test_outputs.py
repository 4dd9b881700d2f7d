"""Files a task asks for, and whether what was written there is of their kind."""

import pytest

from agentcli.session.outputs import (
    copied_input,
    dropped_key,
    named_outputs,
    output_problem,
)


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


def test_a_csv_the_task_asks_for_must_be_comma_separated_with_its_quoted_header():
    task = "write status_counts.csv with a header row `status,count`, then one row per status code"
    assert output_problem("status_counts.csv", "status,count\n200,56\n404,12\n", task) is None
    assert output_problem("status_counts.csv", "status,count\n200,56\nstatus,count\n", task) == (
        "the header `status,count` of status_counts.csv is there again as line 3: it belongs on the first line only."
    )
    uniq = "     56 200\n      3 201\n"  # `uniq -c` output
    assert output_problem("status_counts.csv", uniq, task) == (
        "status_counts.csv is not comma-separated CSV with the same columns on every line: line 1 is `56 200`. "
        "A ```python block using the csv module writes it reliably."
    )
    ragged = output_problem("out.csv", "id,name\n1,Ada,extra\n", "write out.csv")
    assert ragged is not None and "line 2 is `1,Ada,extra`" in ragged
    assert output_problem("status_counts.csv", "code,count\n200,56\n", task) == (
        "the first line of status_counts.csv should be the header `status,count`, as the task says, "
        "but it is `code,count`. A ```python block using the csv module writes it reliably."
    )
    assert output_problem("users.csv", 'id,name\n1,"Lovelace, Ada"\n', "write users.csv") is None  # quoted comma


def test_a_json_the_task_asks_for_must_parse_and_other_files_are_not_judged():
    assert output_problem("merged.json", '{"a": 1}', "write merged.json") is None
    problem = output_problem("merged.json", "{'a': 1}", "write merged.json")
    assert problem is not None and problem.startswith("merged.json is not valid JSON (Expecting property name")
    assert output_problem("root_cause.txt", "anything at all", "write root_cause.txt") is None


@pytest.mark.parametrize("placeholder", ["{}", "[]", "null", '""', "{ }\n"])
def test_a_json_that_holds_no_data_is_no_result(placeholder: str):
    problem = output_problem("merged.json", placeholder, "write merged.json")
    assert problem is not None and problem.startswith(f"merged.json holds only `{placeholder.strip()}`, no data")
    assert output_problem("merged.json", "0", "write merged.json") is None
    assert output_problem("merged.json", '{"a": {}}', "write merged.json") is None


def test_a_csv_with_no_rows_is_no_result():
    problem = output_problem("users.csv", "id,name,email\n", "write users.csv")
    assert problem is not None and problem.startswith("users.csv has only the line `id,name,email` and no rows")


def test_a_csv_must_start_with_the_columns_the_task_lists():
    task = "data/users.json to data/users.csv: a header row, then one row per user with the columns id, name, email"
    assert output_problem("data/users.csv", "id,name,email\n1,Ada,ada@example.org\n", task) is None
    awk = '[,,\n    {,,\n        "id": 1,,\n'  # `json.tool | awk -F,` output: three columns on every line
    assert output_problem("data/users.csv", awk, task) == (
        "the first line of data/users.csv should be the header `id,name,email`, as the task says, but it is `[,,`. "
        "A ```python block using the csv module writes it reliably."
    )
    listed = "write out.csv with the columns `day`, `visits` and `errors`"
    assert output_problem("out.csv", "day,visits,errors\n1,2,3\n", listed) is None
    assert output_problem("out.csv", "day,visits\n1,2\n", "write out.csv with two columns") is None


def test_what_the_task_says_of_its_one_result_holds():
    todo = "How many TODO comments are there under src/? Write just the number to todo_count.txt."
    assert output_problem("todo_count.txt", "7\n", todo) is None
    assert output_problem("todo_count.txt", "src/a.py:3: # TODO\n7\n", todo) == (
        "todo_count.txt should hold just the number, as the task says, but it holds: src/a.py:3: # TODO\n7"
    )
    cause = "write the ERROR line that shows it, copied exactly as one line, to root_cause.txt"
    assert output_problem("root_cause.txt", "ERROR disk full\n", cause) is None
    problem = output_problem("root_cause.txt", "ERROR a\nERROR b\nERROR c\n", cause)
    assert (
        problem
        == "root_cause.txt should be one line, as the task says, but it has 3: choose the one line the task asks for."
    )
    assert output_problem("root_cause.txt", "ERROR a\nERROR b\n", cause, only_output=False) is None
    script = "Write a shell script tools/count.sh that prints the number of lines. It should print only the number."
    assert output_problem("tools/count.sh", '#!/bin/bash\nwc -l < "$1"\n', script) is None


def test_an_asked_file_that_is_a_copy_of_the_task_s_input_is_objected_to():
    task = "Write config/merged.json: start from config/defaults.json and apply config/local.json on top."
    files = {"config/defaults.json": '{"a": 1}\n', "config/local.json": '{"a": 2}\n'}
    problem = copied_input("config/merged.json", '{"a": 1}\n', task, files.get)
    assert problem == (
        "config/merged.json is a copy of config/defaults.json: write the result the task asks for, not its input "
        "unchanged."
    )
    assert copied_input("config/merged.json", '{"a": 2, "b": 1}\n', task, files.get) is None
    assert copied_input("backup.json", '{"a": 1}\n', "Copy config/defaults.json to backup.json", files.get) is None


def test_csv_rows_the_task_says_are_sorted_must_be_sorted_by_the_column_it_names():
    task = "Write status_counts.csv with a header row `status,count`, one row per status code, sorted by status code."
    assert output_problem("status_counts.csv", "status,count\n404,12\n200,56\n", task) == (
        "the rows of status_counts.csv should be sorted by status (ascending), as the task says, but they are in "
        "the order 404, 200. Sort the rows before writing them, after the header, e.g. with `sorted(...)` in a "
        "```python block."
    )
    assert output_problem("status_counts.csv", "status,count\n200,56\n404,12\n", task) is None
    # numbers sort as numbers; "highest first" is descending; ties are sorted
    most = "Write counts.csv with the columns name and count, sorted by count, highest first."
    assert output_problem("counts.csv", "name,count\na,10\nb,9\nc,9\n", most) is None
    assert "sorted by count (descending)" in (output_problem("counts.csv", "name,count\na,1\nb,5\n", most) or "")
    # words that name no column say nothing checkable
    assert output_problem("counts.csv", "name,count\nb,1\na,5\n", "Write counts.csv sorted by date.") is None


def test_a_merge_that_drops_a_nested_key_of_an_input_is_objected_to():
    task = (
        "Write config/merged.json: apply config/local.json on top of config/defaults.json, nested objects key by key."
    )
    files = {
        "config/defaults.json": '{"db": {"host": "a", "port": 5432}, "debug": false}',
        "config/local.json": '{"db": {"host": "b"}, "extra": [1]}',
    }
    shallow = '{"db": {"host": "b"}, "debug": false, "extra": [1]}'
    assert (dropped_key("config/merged.json", shallow, task, files.get) or "").startswith(
        "config/merged.json has no `db.port`, which config/defaults.json has: where both files hold an object, "
        "merge it key by key, do not replace it whole."
    )
    deep = '{"db": {"host": "b", "port": 5432}, "debug": false, "extra": [1]}'
    assert dropped_key("config/merged.json", deep, task, files.get) is None
    # a value the result replaces with a non-object is no lost key; a task that merges nothing is not judged
    assert dropped_key("config/merged.json", '{"db": null, "debug": 1, "extra": 2}', task, files.get) is None
    assert (
        dropped_key("config/merged.json", "{}", "Write config/merged.json from config/local.json.", files.get) is None
    )
