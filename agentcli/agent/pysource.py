"""Python text that a model wrote, or a file it changed, parsed quietly.

Such text holds what Python warns about when it compiles it (`sed 's/\\(x\\)/'` read as Python has an
invalid escape, a SyntaxWarning printed on the user's terminal from Python 3.12) and what it refuses
outright (a NUL byte, a ValueError): neither may reach the user, and neither is a reason to stop.
"""

from __future__ import annotations

import ast
import warnings


def parse(text: str) -> ast.Module | None:
    """The module `text` parses to, or None where it does not parse."""
    try:
        return _parse(text)
    except (SyntaxError, ValueError):
        return None


def syntax_error(text: str) -> SyntaxError | None:
    """Why `text` does not parse as Python, or None where it does."""
    try:
        _parse(text)
    except SyntaxError as e:
        return e
    except ValueError as e:
        return SyntaxError(str(e), ("<string>", 1, 0, ""))
    return None


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)
