"""Python text from the model is parsed without warnings reaching the user and without exceptions."""

from __future__ import annotations

import warnings

from agentcli.agent.parsing import parse_reply
from agentcli.agent.pysource import parse, syntax_error


def test_text_python_warns_about_parses_silently():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parse("x = '\\(a\\)'\n") is not None  # an invalid escape: a SyntaxWarning from Python 3.12
        parsed = parse_reply("```bash\nsed -i 's/\\(a\\)/b/' f.py\n```")
    assert parsed.command == "sed -i 's/\\(a\\)/b/' f.py"
    assert caught == []


def test_text_python_refuses_is_no_exception():
    assert parse("x = 1\x00\n") is None
    error = syntax_error("x = 1\x00\n")
    assert error is not None
    assert syntax_error("def f(:\n") is not None and syntax_error("x = 1\n") is None
