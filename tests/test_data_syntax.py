"""Policy `data-syntax`: DONE while a JSON or TOML file the task created or changed does not parse."""

from __future__ import annotations

from pathlib import Path

from agentcli.repo import checkpoint as cp
from agentcli.session.data_files import data_parser, json_error, toml_error
from agentcli.session.done import TaskState, broken_data
from tests.conftest import committed_repo


def test_parsers_say_where_they_stopped():
    assert json_error('{"a": 1}') is None
    assert json_error('{"a": 1}\n{"b": 2}\n') == ("Extra data, line 2 column 1", 2)
    assert toml_error("a = 1\n") is None
    message, line = toml_error("a = 1\nb = \n")
    assert line == 2 and "line 2" in message
    assert data_parser("x/y.json") is json_error and data_parser("pyproject.toml") is toml_error
    assert data_parser("notes.yaml") is None


def test_a_broken_file_is_objected_to_and_one_broken_before_is_not(tmp_path: Path):
    files = {"config.json": '{"a": 1}\n', "tsconfig.json": "// comments\n{}\n", "app.toml": "x = 1\n"}
    repo = committed_repo(tmp_path / "repo", files)
    state = TaskState(repo, cp.create_checkpoint(repo, "t"))
    assert broken_data(state) is None
    (repo / "tsconfig.json").write_text("// still comments\n{}\n")
    assert broken_data(state) is None  # it did not parse before the task either
    (repo / "config.json").write_text('{"a": 1}\n{"b": 2}\n')
    objection = broken_data(state)
    assert objection is not None and objection.startswith("config.json is not valid JSON (Extra data, line 2")
    assert '>2  {"b": 2}' in objection  # the line it stopped at, shown
    (repo / "config.json").write_text('{"a": 1, "b": 2}\n')
    (repo / "new.toml").write_text("[table\n")
    assert (objection := broken_data(state)) is not None and objection.startswith("new.toml is not valid TOML")
