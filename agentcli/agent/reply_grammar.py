"""The reply protocol as a grammar (GBNF), for backends that decode under one (llama.cpp).

A reply is a few lines of prose (a thought, a plan, or the path of a file to write) and then exactly
one action: a fenced block that holds something, or a `DONE: summary` line (`DONE` alone too).
Decoded under this grammar a reply cannot be malformed: no empty or unclosed block, no second action,
no invented output after the first, no reply that rambles on without an action. The grammar never
looks at the task: it is the shape of every reply.

A begun reply (the loop's `prefix`) is already part of the reply, so the grammar for the rest starts
where the prefix leaves off: `reply_grammar(prefix)`.

With `own_lines_barred`, no line of prose starts with `[` (after any indent): agentcli's own lines do
(`[exit 0 · 0.1s]`, `[note] ...`, `[next: ...]`), and a small model starts replies by copying them.
"""

from __future__ import annotations

import re

# Prose lines before the action: a plan of up to six steps, its heading, a sentence and a path fit.
MAX_PROSE_LINES = 12

# Rules shared by every entry point. No line of prose or code holds three backticks in a row: a fence
# opens only the action's block, at the start of a line, and closes it alone on its line (indented, as
# the parser allows); the parser would read three backticks anywhere else as a fence too. The closing
# fence may end its line: the tokenizer has "```\n" as one token, which a model prefers to "```"
# (forbidden it, a model goes on writing the block until its budget runs out).
_RULES = rf"""
prose ::= pline{{0,{MAX_PROSE_LINES}}}
line ::= text? "\n"
text ::= seg+ tick? | tick
seg ::= [^`\n] | "`" [^`\n] | "``" [^`\n]
tick ::= "`" | "``"
action ::= block | done
done ::= "DONE" (":" [^\n]*)? "\n"?
block ::= "```" label "\n" body
label ::= [a-zA-Z0-9_+.-]{{0,24}}
body ::= [ \t]* first seg* tick? "\n" rest
first ::= [^ \t`\n] | "`" [^`\n] | "``" [^`\n]
rest ::= line* [ \t]* "```" [ \t]* "\n"?
"""

# A line of prose; barred from starting with `[`, past its indent (a line of blanks only is a line too).
_ANY_PROSE_LINE = "pline ::= line\n"
_OWN_LINES_BARRED = r"""
pline ::= ptext? "\n"
ptext ::= [ \t]+ | [ \t]* (pfirst seg* tick? | tick)
pfirst ::= [^ \t`\n[] | "`" [^`\n] | "``" [^`\n]
"""

_FENCE_LINE = re.compile(r"^[ \t]*```")


def reply_grammar(prefix: str = "", own_lines_barred: bool = False, action_due: bool = False) -> str | None:
    """The grammar of what may follow `prefix` in a reply; None where the prefix already holds its
    action (nothing is left to constrain). `action_due`: a prefix of whole lines of prose is followed
    by the action at once."""
    root = _root_after(prefix)
    if root is None:
        return None
    if action_due and root == "prose action":
        root = "action"
    return f"root ::= {root}\n{_RULES}{_OWN_LINES_BARRED if own_lines_barred else _ANY_PROSE_LINE}"


def _root_after(prefix: str) -> str | None:
    """Where the grammar picks up after `prefix`: the rule (sequence) for the rest of the reply."""
    in_block = False
    written = False  # whether the open block holds something yet
    lines = prefix.split("\n")
    for index, text in enumerate(lines):
        last = index == len(lines) - 1
        if not in_block:
            if _FENCE_LINE.match(text):
                if last:  # on the opening fence's line: its label goes on
                    return 'label "\\n" body'
                in_block, written = True, False
            elif text.startswith("DONE:") and not last:
                return None  # a finished DONE line is the whole action
            elif last:
                if text.startswith("DONE:"):
                    return '[^\\n]* "\\n"?'
                return "prose action" if text == "" else 'text? "\\n" prose action'
            continue
        if _FENCE_LINE.match(text) and written:
            return None  # the block is closed (a line may not start with a fence inside it)
        if last:
            if text == "":
                return "rest" if written else "body"
            return 'text? "\\n" rest' if written or text.strip() else "body"
        written = written or bool(text.strip())
    return "prose action"
