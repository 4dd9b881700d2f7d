"""Results printed where the task asks for them in a file."""

from __future__ import annotations

import pytest

from agentcli.agent.printed import printed_not_written, redirected

FILES = {"in.csv": "a,b\n1,2\n", "out.csv": "", "merged.json": "{}"}


@pytest.mark.parametrize(
    ("command", "output", "pointed_out"),
    [
        ("python3 merge.py", '{"a": 1}', True),
        ("python3 merge.py", "{}", False),  # no result
        ("python3 merge.py", "merged: 1 key", False),  # not of the file's kind
        ("python3 merge.py > merged.json", "", False),
        ("python3 merge.py | tee merged.json", '{"a": 1}', False),
        ("python3 to_csv.py", "a,b\n3,4\n", True),
        ("cat in.csv", "a,b\n1,2\n", False),  # the input looked at
        ("python3 to_csv.py", "a,b\n3\n", False),  # rows unlike the header: no CSV
    ],
)
def test_printed_results_of_an_asked_file_s_kind_are_pointed_out(command: str, output: str, pointed_out: bool):
    asked = ["merged.json", "out.csv"]
    assert (printed_not_written(command, output, asked, FILES.get) is not None) is pointed_out


def test_a_result_the_file_already_holds_is_not_pointed_out():
    assert printed_not_written("python3 m.py", '{"a": 1}', ["m.json"], {"m.json": '{ "a": 1 }'}.get) is None


def test_the_redirection_goes_where_the_shell_reads_it():
    assert redirected("python3 m.py", "out dir/m.json") == "python3 m.py > 'out dir/m.json'"
    heredoc = "python3 - <<'EOF'\nprint(1)\nEOF"
    assert redirected(heredoc, "m.json") == "python3 - <<'EOF' > m.json\nprint(1)\nEOF"
    assert redirected("cd sub\npython3 m.py", "m.json") == "{\ncd sub\npython3 m.py\n} > m.json"
