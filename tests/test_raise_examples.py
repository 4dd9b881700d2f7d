"""Reading the bad input a task or docstring says must raise an error."""

from __future__ import annotations

from agentcli.session.raise_examples import find_raise_examples, raise_sentences

DURATIONS = '''def parse_duration(text):
    """Seconds in a duration such as "1h30m".

    Raise ValueError for an empty string or for anything else that does not follow this
    format (for example "10", "1x", "1m1h" or "h").

    >>> parse_duration("1h30m")
    5400
    """


def format_duration(seconds):
    """Raise ValueError for negative input, e.g. -1."""
'''


def test_a_sentence_gives_the_error_the_inputs_as_literals_and_its_words():
    [(error, values, words, quoted)] = raise_sentences(
        'Make it raise ValueError when width or height is not a positive number, e.g. 0, -2, or the string "3".'
    )
    assert (error, values, quoted) == ("ValueError", ("0", "-2", "'3'"), '0, -2, or the string "3"')
    assert {"width", "height"} <= set(words)


def test_sentences_without_an_error_or_without_examples_give_nothing():
    assert raise_sentences("Raise KeyError if the key is missing. Values such as 3 are fine.") == []
    assert raise_sentences("Handle inputs such as 0 or -1 gracefully.") == []


def test_none_numbers_and_an_empty_string_are_examples_and_parentheses_end_them():
    [(_, values, _, _)] = raise_sentences("raises `TypeError` for an empty string or non-strings, e.g. None or 4.5")
    assert values == ("''", "None", "4.5")
    [(_, values, _, quoted)] = raise_sentences('Raise ValueError on bad input like "abc" (not a number).')
    assert values == ("'abc'",) and quoted == '"abc"'


def test_the_docstring_of_the_function_the_task_names_gives_examples_and_others_do_not():
    [found] = find_raise_examples("Implement parse_duration in durations.py.", {"pkg/durations.py": DURATIONS})
    assert (found.target, found.module, found.error) == ("parse_duration", "pkg.durations", "ValueError")
    assert found.values == ("''", "'10'", "'1x'", "'1m1h'", "'h'")
    assert found.source == "the docstring of parse_duration"


def test_the_task_s_examples_go_to_the_one_definition_it_names():
    task = "Make Square raise ValueError for a side that is not positive, such as 0."
    sources = {"shapes.py": "class Square:\n    pass\n", "other.py": "def area():\n    pass\n"}
    [found] = find_raise_examples(task, sources)
    assert (found.target, found.module, found.values, found.source) == ("Square", "shapes", ("0",), "the task")
    # Two definitions named: which one "it" is cannot be told, so the task's examples go to neither.
    assert find_raise_examples(task + " Leave area alone.", sources) == []
