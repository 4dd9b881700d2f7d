#!/bin/bash
set -e
mkdir -p tests
cat > tests/test_textstats.py <<'PY'
from textstats import top_words, word_frequencies


def test_word_frequencies_ignores_case_and_punctuation():
    assert word_frequencies("The cat, the hat. Don't!") == {"the": 2, "cat": 1, "hat": 1, "don't": 1}


def test_word_frequencies_empty():
    assert word_frequencies("  ...  ") == {}


def test_top_words_orders_by_count_then_alphabet():
    assert top_words("b a c b a b", 2) == [("b", 3), ("a", 2)]
    assert top_words("z y x", 2) == [("x", 1), ("y", 1)]


def test_top_words_fewer_than_n():
    assert top_words("one", 3) == [("one", 1)]
PY
python3 -m pytest -q tests/test_textstats.py
