"""Greetings in several languages."""

import sys

GREETINGS = {
    "en": "Hello",
    "fr": "Bonjour",
    "de": "Hallo",
}


def greet(name: str, lang: str = "en") -> str:
    return f"{GREETINGS[lang]}, {name}!"


if __name__ == "__main__":
    print(greet(*sys.argv[1:3]))
