"""Bad input that must raise an error, as the task or a docstring gives it, tried on the code.

"Make it raise ValueError when width or height is not a positive number, e.g. 0, -2, or the string
"3"" names the error, the inputs and the parameters; "Raise ValueError for an empty string or ...
(for example "10", "1x" or "h")" in a docstring does the same for its function. A small model checks
its change on one good input and says done, with `"3" <= 0` raising TypeError or `"1m1h"` parsed as
3660: each example is called in the sandbox and what it does instead goes back to the model.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass

from agentcli.prompts import render
from agentcli.sandbox.base import Sandbox
from agentcli.session.checks import run_quietly
from agentcli.session.definitions import WORD, named_definitions

# An error named as the one to raise: `raise ValueError`, `raises a TypeError`, `raising KeyError`.
_RAISE = re.compile(r"\b[Rr]ais(?:e|es|ing)\s+(?:an?\s+)?`?([A-Z]\w*(?:Error|Exception))`?")
# Where the examples start, after the error is named.
_EXAMPLES_START = re.compile(r"\b(?:e\.g\.|for example|for instance|such as|like)[\s:,]", re.IGNORECASE)
# A sentence ends at a full stop before a capital letter or the end (not inside "e.g.").
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.(?=\s+[A-Z]|\s*$)|\n\s*\n|\n\s*>>>")
# An example value: a quoted string or a number standing alone.
_VALUE = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'|`([^`\n]*)`|(?<![\w.\-])(-?\d+(?:\.\d+)?|None)(?![\w.]*\w)")
_CONTRAST = re.compile(r";|\b(?:but|while|whereas|though|although|except|unless|and accept|and allow)\b", re.I)
_VALID = re.compile(
    r"(?<!\bnot )(?<!\bnot a )(?<!\bnot an )\b(?:valid|accept\w*|allowed|correct|good|well-formed)\b", re.IGNORECASE
)
_EMPTY_STRING = re.compile(r"\ban empty string\b", re.IGNORECASE)
MAX_EXAMPLES = 8
MARK = "@@agentcli-raise@@"
RUN_TIMEOUT = 20.0


@dataclass(frozen=True)
class RaiseExamples:
    """Inputs to `target` (a top-level function or class of `module`) that must raise `error`."""

    target: str
    module: str  # dotted module name, importable from the repository root
    error: str
    values: tuple[str, ...]  # Python literals
    words: tuple[str, ...]  # the sentence's words: the parameters it names get the values
    source: str  # "the task" or "the docstring of parse_duration"
    quoted: str  # the examples as the text gives them


def _sentences(text: str) -> list[str]:
    sentences, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        sentences.append(text[start : end.start()])
        start = end.end()
    sentences.append(text[start:])
    return [" ".join(s.split()) for s in sentences if s.strip()]


def _literal(match: re.Match[str]) -> str:
    number = match.group(4)
    if number is not None:
        return number
    text = next(g for g in match.groups()[:3] if g is not None)
    return repr(text)


def raise_sentences(text: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...], str]]:
    """Each sentence of `text` that names an error to raise with example inputs: the error, the
    inputs as Python literals, the sentence's words, and the examples as written."""
    found = []
    for sentence in _sentences(text):
        error = _RAISE.search(sentence)
        start = _EXAMPLES_START.search(sentence, error.end()) if error else None
        if error is None or start is None:
            continue
        # '...; valid inputs look like "1h"': examples past a turn of the sentence are not the bad input.
        between = sentence[error.end() : start.start()]
        if _CONTRAST.search(between) or _VALID.search(between):
            continue
        # The examples end where the sentence turns to what is fine: "..., but accept strings such as "8080"".
        examples = _CONTRAST.split(re.split(r"[()]", sentence[start.end() :], maxsplit=1)[0], maxsplit=1)[0]
        values = [_literal(m) for m in _VALUE.finditer(examples)]
        if _EMPTY_STRING.search(sentence):
            values.insert(0, "''")
        values = list(dict.fromkeys(values))[:MAX_EXAMPLES]
        if values:
            words = tuple(dict.fromkeys(WORD.findall(sentence[: start.start()])))
            found.append((error.group(1), tuple(values), words, examples.strip(" ,;:")))
    return found


def find_raise_examples(task: str, sources: dict[str, str]) -> list[RaiseExamples]:
    """The raise examples the task gives for a function or class it names, and those the docstrings
    of functions it names give; `sources` maps the repository's Python files to their text."""
    named = named_definitions(task, sources)
    found = []
    if len(named) == 1:  # "it" in the task is the one definition it names
        one = named[0]
        for error, values, words, quoted in raise_sentences(task):
            found.append(RaiseExamples(one.name, one.module, error, values, words, "the task", quoted))
    for each in named:
        source = f"the docstring of {each.name}"
        for error, values, words, quoted in raise_sentences(ast.get_docstring(each.node) or ""):
            found.append(RaiseExamples(each.name, each.module, error, values, words, source, quoted))
    return found


# Run in the sandbox: each example called with the parameters the sentence names (or, where it names
# none, every required one) set to it; a call that cannot be made so is left out.
_PROBE = """
import ast, importlib, inspect, json, sys
sys.path.insert(0, '.')
spec = json.loads(sys.argv[1])
try:
    target = getattr(importlib.import_module(spec['module']), spec['target'])
    parameters = list(inspect.signature(target).parameters.values())
except Exception:
    sys.exit(0)
kinds = {float: '(int, float)', 'float': '(int, float)', int: 'int', 'int': 'int', str: 'str', 'str': 'str'}
positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
required = [p.name for p in parameters if p.default is p.empty and p.kind in positional]
named = [p.name for p in parameters if p.name in spec['words'] and p.kind in positional]
chosen = named or required
if not chosen or any(name not in chosen for name in required):
    sys.exit(0)
for literal in spec['values']:
    value = ast.literal_eval(literal)
    call = spec['target'] + '(' + ', '.join(n + '=' + repr(value) for n in chosen) + ')'
    try:
        result = target(**{n: value for n in chosen})
    except Exception as e:
        if spec['error'] in [c.__name__ for c in type(e).__mro__]:
            continue
        what = 'raises ' + type(e).__name__ + (': ' + str(e) if str(e) else '')
    else:
        what = 'returns ' + repr(result)[:200]
    first = next(p for p in parameters if p.name == chosen[0])
    record = {'call': call, 'what': what, 'name': first.name, 'kinds': kinds.get(first.annotation, '')}
    print(spec['mark'] + json.dumps(record))
"""


def failing_raise_examples(sandbox: Sandbox, examples: RaiseExamples, timeout: float = RUN_TIMEOUT) -> str | None:
    """What the example calls do instead of raising the error, or None when each raises it (or the
    calls cannot be made)."""
    spec = json.dumps(
        {
            "module": examples.module,
            "target": examples.target,
            "error": examples.error,
            "values": examples.values,
            "words": examples.words,
            "mark": MARK,
        }
    )
    obs = run_quietly(sandbox, f"python3 -c {shlex.quote(_PROBE)} {shlex.quote(spec)} < /dev/null", timeout)
    if obs.timed_out:
        return None
    calls = [json.loads(line[len(MARK) :]) for line in obs.output.splitlines() if line.startswith(MARK)]
    if not calls:
        return None
    # Told only to raise the error, a small model sends its `width <= 0` check again: a TypeError is
    # answered with the type check that goes first.
    typed = next((c for c in calls if c["what"].startswith("raises TypeError")), None)
    return render(
        "objections/no_raise",
        source=examples.source,
        quoted=examples.quoted,
        error=examples.error,
        calls=calls,
        typed=typed,
    )
