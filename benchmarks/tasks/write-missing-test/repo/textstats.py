"""Word statistics for plain text."""

import re
from collections import Counter

WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")


def word_frequencies(text: str) -> dict[str, int]:
    """Count how often each word occurs in `text`.

    Words are runs of letters, with apostrophes allowed inside a word ("don't").
    Case is ignored: "The" and "the" are the same word. Returns a dict that maps
    each lower-case word to its count; an empty dict for text without words.
    """
    return dict(Counter(WORD.findall(text.lower())))


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    """The `n` most frequent words of `text` as (word, count) pairs, most frequent first.

    Ties are broken alphabetically. Fewer than `n` pairs if the text has fewer words.
    """
    counts = word_frequencies(text)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
