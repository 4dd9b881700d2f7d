"""Print the most common words of a text file."""

import re
import sys
from collections import Counter


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    words = re.findall(r"[a-z']+", text.lower())
    return Counter(words).most_common(n)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        for word, count in top_words(f.read()):
            print(f"{count:5d} {word}")
