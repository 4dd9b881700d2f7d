"""Whether a data file parses: JSON and TOML, read by Python's own parsers, with where they stopped."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# tomllib names the place in its message only: "Invalid value (at line 3, column 7)".
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")
# What a parser says of a text: None where it parses, else its message and the line it stopped at.
Parser = Callable[[str], tuple[str, int] | None]


def json_error(text: str) -> tuple[str, int] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return f"{e.msg}, line {e.lineno} column {e.colno}", e.lineno
    except RecursionError:
        return None  # nested deeper than Python reads: no verdict
    return None


def toml_error(text: str) -> tuple[str, int] | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        found = _TOML_LINE.search(str(e))
        return str(e), int(found.group(1)) if found else 0
    return None


def data_parser(path: str) -> Parser | None:
    """The parser for a file by its name; None for a kind no parser here reads."""
    if path.endswith(".json"):
        return json_error
    if path.endswith(".toml"):
        return toml_error
    return None
