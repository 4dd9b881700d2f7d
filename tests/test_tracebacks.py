"""Finding where a failure happened in the repository's code, and showing the model those lines."""

from __future__ import annotations

from pathlib import Path

from agentcli.agent.loop import Agent
from agentcli.agent.tracebacks import excerpt, failure_location, without_library_frames
from agentcli.events import CommandStarted, Event, EventBus, FormatError
from agentcli.models.scripted import ScriptedModel
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for

PYTHON_TRACEBACK = """Traceback (most recent call last):
  File "/w/main.py", line 20, in <module>
    sys.exit(main(sys.argv[1:]))
  File "/w/report/summary.py", line 15, in revenue_by_customer
    totals[order["customer"]] += parse_amount(order["amount"])
  File "/usr/lib/python3.11/csv.py", line 110, in __next__
KeyError: 'amount'
"""
PYTEST_SHORT = """____ test_second_page ____
test_pager.py:9: in test_second_page
    assert paginate(ITEMS, 2, 3) == [4, 5, 6]
pager.py:6: in paginate
    return items[start : start + per_page - 1]
E   AssertionError
"""
FILES = {"main.py", "report/summary.py", "test_pager.py", "pager.py", "backup.sh"}


def test_the_innermost_frame_in_the_repository():
    assert failure_location(PYTHON_TRACEBACK, "/w", FILES.__contains__) == ("report/summary.py", 15)


def test_code_under_test_wins_over_the_test_file():
    assert failure_location(PYTEST_SHORT, "/w", FILES.__contains__) == ("pager.py", 6)
    only_test = "test_pager.py:9: AssertionError\n"
    assert failure_location(only_test, "/w", FILES.__contains__) == ("test_pager.py", 9)


def test_a_frames_relative_path_is_from_where_the_command_ran():
    files = {"lib/pager.py", "lib/test_pager.py", "pager.py"}.__contains__
    assert failure_location(PYTEST_SHORT, "/w", files, "lib") == ("lib/pager.py", 6)
    assert failure_location(PYTHON_TRACEBACK, "/w", FILES.__contains__, "lib") == ("report/summary.py", 15)
    assert failure_location(PYTEST_SHORT, "/w", files, None) is None  # run outside the repository


def test_shell_errors_and_outputs_without_a_location():
    assert failure_location("backup.sh: line 5: cd: my: No such file\n", "/w", FILES.__contains__) == ("backup.sh", 5)
    assert failure_location("ls: cannot access 'x'\n", "/w", FILES.__contains__) is None
    outside = 'File "/elsewhere/lib.py", line 3, in f\n'
    assert failure_location(outside, "/w", FILES.__contains__) is None


def test_excerpt_numbers_lines_like_cat_n_and_marks_the_line():
    text = "\n".join(f"line {i}" for i in range(1, 21))
    shown = excerpt(text, 10).splitlines()
    assert shown[0] == "  6  line 6" and shown[4] == ">10  line 10" and shown[-1] == " 14  line 14"
    assert excerpt(text, 99) == ""


def drive(repo: Path, replies: list[str], task: str) -> tuple[ScriptedModel, list[Event]]:
    """Run the loop on `repo` with scripted replies; the model (with the prompts it saw) and the events."""
    seen: list[Event] = []
    model = ScriptedModel(replies)
    with HostSandbox(repo, channel_for(repo)) as box:
        Agent(model, box, EventBus([seen.append])).run(task)
    return model, seen


def test_the_model_sees_the_failing_code_and_is_pointed_at_it_when_it_repeats(tmp_path: Path):
    (tmp_path / "calc.py").write_text("def ratio(a, b):\n    return a / b\n\nprint(ratio(1, 0))\n")
    replies = ["```bash\npython3 calc.py\n```", "Once more.\n```bash\npython3 calc.py\n```", "DONE: gave up"]
    model, seen = drive(tmp_path, replies, "fix calc.py")
    observation = model.calls[1][-1]["content"]
    assert "ZeroDivisionError" in observation
    assert "The error comes from calc.py line 2:\n 1  def ratio(a, b):\n>2      return a / b\n 3\n" in observation
    refusals = [e.message for e in seen if isinstance(e, FormatError)]
    assert "fix the code the error comes from (calc.py line 2)" in refusals[0]
    assert len([e for e in seen if isinstance(e, CommandStarted)]) == 1


def test_a_failing_assertion_shows_the_function_it_calls_not_the_test(tmp_path: Path):
    (tmp_path / "pager.py").write_text(
        "def page_count(n, per):\n    return n // per\n\n\ndef paginate(items, page, per):\n"
        "    start = page * per\n    return items[start : start + per]\n"
    )
    (tmp_path / "test_pager.py").write_text(
        "from pager import paginate\n\n\ndef test_first_page():\n    assert paginate([1, 2, 3, 4], 1, 2) == [1, 2]\n"
    )
    tests = "python3 -m pytest -q --tb=short -p no:cacheprovider"
    replies = ["```bash\n" + tests + "\n```", "Again.\n```bash\n" + tests + "\n```", "DONE: gave up"]
    model, seen = drive(tmp_path, replies, "fix the pager")
    observation = model.calls[1][-1]["content"]
    assert "The failing line test_pager.py:5 calls paginate, defined in pager.py:\n" in observation
    assert " 6      start = page * per\n 7      return items[start : start + per]" in observation
    refusal = next(e.message for e in seen if isinstance(e, FormatError))
    assert "(pager.py line 5)" in refusal and "test_pager.py line" not in refusal


COLLECTION_ERROR = """_______________________ ERROR collecting test_shapes.py ________________________
/usr/lib/python3/dist-packages/_pytest/python.py:618: in _importtestmodule
    mod = import_path(self.path, mode=importmode, root=self.config.rootpath)
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
<frozen importlib._bootstrap>:1206: in _gcd_import
    ???
test_shapes.py:3: in <module>
    from shapes import Circle, Square, total_area
E     File "/workspace/shapes.py", line 24
E       def perimeter(self) -> float
E                                   ^
E   SyntaxError: expected ':'
"""


def test_a_syntax_error_while_collecting_points_to_the_module_that_does_not_parse():
    exists = {"shapes.py", "test_shapes.py"}.__contains__
    assert failure_location(COLLECTION_ERROR, "/workspace", exists) == ("shapes.py", 24)


def test_frames_in_pythons_library_are_left_out_and_the_repositorys_kept():
    shown = without_library_frames(COLLECTION_ERROR)
    assert "[3 frames in Python's library and installed packages left out]" in shown
    assert "importlib" not in shown and "???" not in shown and "_pytest" not in shown
    assert "test_shapes.py:3: in <module>\n    from shapes import" in shown and "SyntaxError: expected ':'" in shown
    plain = (
        "Traceback (most recent call last):\n"
        '  File "/workspace/main.py", line 3, in <module>\n    json.load(f)\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 293, in load\n    return loads(fp.read())\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n    return _default_decoder.decode(s)\n'
        '  File "/workspace/lib/parse.py", line 9, in decode\n    raise ValueError(s)\n'
        "ValueError: x\n"
    )
    kept = without_library_frames(plain)
    assert 'File "/workspace/main.py", line 3' in kept and 'File "/workspace/lib/parse.py", line 9' in kept
    assert "json/__init__.py" not in kept and "raise ValueError(s)" in kept
    assert (
        without_library_frames("<frozen x>:1: in f\n    ???\nok\n") == "<frozen x>:1: in f\n    ???\nok\n"
    )  # one frame
