"""The reply grammar: where it picks up after a begun reply, what llama.cpp's own grammar engine accepts
and rejects under it, replies a real model decodes under it, and how the loop asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.asking import prose_before_loop
from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.agent.parsing import parse_reply, repeating
from agentcli.agent.reply_grammar import MAX_PROSE_LINES, reply_grammar
from agentcli.events import EventBus, FormatError, ModelPrompt, ModelReplied, PolicyFired, ReplyAskedAgain
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, smol_model


@pytest.mark.parametrize(
    ("prefix", "root"),
    [
        ("", "prose action"),
        ("PLAN:\n1. look\n", "prose action"),
        ("PLAN:", 'text? "\\n" prose action'),
        ("app.py\n```py", 'label "\\n" body'),
        ("app.py\n```python\n", "body"),
        ("app.py\n```python\n\n", "body"),  # nothing written in the block yet
        ("app.py\n```python\ndef f():\n", "rest"),
        ("app.py\n```python\ndef f():\n    return", 'text? "\\n" rest'),
        ("DONE: fixed", '[^\\n]* "\\n"?'),
    ],
)
def test_the_grammar_picks_up_where_a_begun_reply_leaves_off(prefix: str, root: str) -> None:
    grammar = reply_grammar(prefix)
    assert grammar is not None
    assert grammar.splitlines()[0] == f"root ::= {root}"


@pytest.mark.parametrize(
    ("prefix", "root"),
    [("", "action"), ("I look at the file. It holds\n", "action"), ("PLAN:", 'text? "\\n" prose action')],
)
def test_an_action_due_follows_whole_lines_of_prose_at_once(prefix: str, root: str) -> None:
    grammar = reply_grammar(prefix, action_due=True)
    assert grammar is not None
    assert grammar.splitlines()[0] == f"root ::= {root}"


@pytest.mark.parametrize("prefix", ["```bash\nls\n```\n", "x\n```bash\nls\n```", "DONE: fixed\n"])
def test_a_prefix_that_holds_its_action_leaves_nothing_to_constrain(prefix: str) -> None:
    assert reply_grammar(prefix) is None


# --- llama.cpp's grammar engine, over a real vocabulary ------------------------------------------


@pytest.fixture(scope="module")
def engine():
    model = smol_model()
    return model, model._engine()


def _accepts(engine, prefix: str, text: str, own_lines_barred: bool = False, action_due: bool = False) -> bool:
    """Whether llama.cpp's grammar engine lets `text` follow `prefix`, token by token, and then end."""
    import llama_cpp

    from agentcli.models.grammar_filter import GrammarFilter

    grammar = reply_grammar(prefix, own_lines_barred=own_lines_barred, action_due=action_due)
    assert grammar is not None
    llama = engine[1].llama
    constraint = GrammarFilter(llama_cpp, llama._model.vocab, grammar)
    try:
        tokens = llama.tokenize(text.encode(), add_bos=False, special=False)
        return all(constraint.advance(t) for t in tokens) and constraint.allowed(llama.token_eos())
    finally:
        constraint.close()


WELL_FORMED = [
    "PLAN:\n1. Run the tests.\n2. Fix the bug.\n\nFirst the tests.\n```bash\npython3 -m pytest -q\n```",
    "```bash\nls -la\n```",
    "```bash\nls -la\n```\n",
    "I write the fix.\n`app.py`\n```python\ndef add(a, b):\n    return a + b\n```",
    "Run `ls` and ``echo``.\n```bash\necho '`date`' ``\n```",
    "app.py\n```\n    x = 1\n\n    y = 2\n    ```",  # an indented closing fence, as the parser allows
    "The tests pass.\nDONE: fixed add() in app.py",
    "DONE: nothing was left to do\n",
    "DONE",
    "Count them.\n```python\nimport json\nprint(len(json.load(open('a.json'))))\n```",
]

MALFORMED = {
    "two actions": "```bash\nls\n```\n```bash\ncat a.py\n```",
    "an empty block": "```bash\n```",
    "a block of blank lines": "```bash\n\n\n```",
    "output written after the command": "```bash\npytest\n```\n[exit 0]\n2 passed",
    "an unclosed block": "```bash\nls -la\n",
    "prose and no action": "I will now look at the files and then fix the bug.",
    "a DONE after the action": "```bash\nls\n```\nDONE: listed",
    "a fence after text on its line": "Command: ```bash\nls\n```",
    "a block line ending in a fence": "```bash\nls -la```",
    "rambling past the prose budget": "".join(f"Line {i}.\n" for i in range(MAX_PROSE_LINES + 1)) + "DONE: x",
}


@pytest.mark.llamacpp
@pytest.mark.parametrize("barred", [False, True])
@pytest.mark.parametrize("reply", WELL_FORMED)
def test_llama_cpp_accepts_well_formed_replies(engine, reply: str, barred: bool) -> None:
    assert _accepts(engine, "", reply, own_lines_barred=barred)
    parsed = parse_reply(reply)
    assert parsed.command or parsed.file_write or parsed.code or parsed.finished


@pytest.mark.llamacpp
@pytest.mark.parametrize("name", MALFORMED)
def test_llama_cpp_rejects_malformed_replies(engine, name: str) -> None:
    assert not _accepts(engine, "", MALFORMED[name])


COPIED_OWN_LINES = [
    "[exit 0 · 0.0s]\n```bash\nls\n```",
    "I look.\n  [note] the file is unchanged\n```bash\nls\n```",
    "[next: a sentence, then one command in a bash code block. DONE: only when the whole task is done]\nDONE",
    "\t[note]\nDONE: x",
]
# Brackets elsewhere in prose, and in blocks, stay: a link, a list, a shell test, a JSON array.
BRACKETS_KEPT = [
    "See [the docs](docs.md) and a[0].\n   \n```bash\n[ -f a.py ] && echo yes\n```",
    "data.json\n```json\n[1, 2]\n```",
    "`[` opens a test.\nDONE: explained",
]


@pytest.mark.llamacpp
@pytest.mark.parametrize("reply", COPIED_OWN_LINES)
def test_barred_own_lines_cannot_start_a_line_of_prose(engine, reply: str) -> None:
    assert _accepts(engine, "", reply)
    assert not _accepts(engine, "", reply, own_lines_barred=True)


@pytest.mark.llamacpp
@pytest.mark.parametrize("reply", BRACKETS_KEPT)
def test_brackets_elsewhere_are_not_barred(engine, reply: str) -> None:
    assert _accepts(engine, "", reply, own_lines_barred=True)


@pytest.mark.llamacpp
def test_a_small_model_told_to_copy_a_note_writes_its_own_words(engine) -> None:
    """SmolLM2-135M, asked to copy agentcli's output header, copies it freely and not under the bar."""
    model, _ = engine
    messages = [
        {"role": "system", "content": "You copy text."},
        {"role": "user", "content": "Copy this line, then write DONE:\n[exit 0 · 0.0s]"},
    ]
    model.load().reset()
    free = model.complete(messages, max_tokens=60, temperature=0.0, grammar=reply_grammar()).text
    assert free.startswith("["), free  # the copy that the bar is for
    model.load().reset()
    barred = model.complete(messages, max_tokens=60, temperature=0.0, grammar=reply_grammar(own_lines_barred=True))
    prose = barred.text.split("```")[0]
    assert not [line for line in prose.splitlines() if line.lstrip().startswith("[")], barred.text


@pytest.mark.llamacpp
def test_after_prose_stopped_before_its_action_only_the_action_is_decoded(engine) -> None:
    prose = "The tests pass. The change is made.\n"
    assert _accepts(engine, prose, "DONE: made", action_due=True)
    assert _accepts(engine, prose, "```bash\npytest -q\n```", action_due=True)
    assert _accepts(engine, prose, "More of it.\nDONE: made")  # without it, prose may go on
    assert not _accepts(engine, prose, "More of it.\nDONE: made", action_due=True)


@pytest.mark.llamacpp
def test_a_begun_change_is_continued_to_a_closed_block(engine) -> None:
    prefix = "app.py\n```python\ndef add(a, b):\n"
    assert _accepts(engine, prefix, "    return a + b\n```")
    assert not _accepts(engine, prefix, "    return a + b\n```\nDONE: added")
    assert not _accepts(engine, "app.py\n```python\n", "```")  # the begun block may not close empty


@pytest.mark.llamacpp
def test_an_invalid_grammar_is_one_model_error(engine) -> None:
    from agentcli.models.base import ModelError

    with pytest.raises(ModelError, match="rejected the grammar"):
        engine[0].complete([{"role": "user", "content": "hi"}], max_tokens=4, grammar="root ::= undefined-rule")


@pytest.mark.llamacpp
@pytest.mark.parametrize("question", ["List the files.", "Fix the failing test in calc.py, then say you are done."])
def test_the_filter_decodes_what_the_librarys_grammar_sampler_decodes(engine, question: str) -> None:
    """Greedy, checking only the likeliest candidates gives the reply the full check of every token gives."""
    import llama_cpp

    model = engine[0]
    messages = [
        {"role": "system", "content": "Reply with one shell command in a ```bash block."},
        {"role": "user", "content": question},
    ]
    grammar = reply_grammar()
    model.load().reset()
    ours = model.complete(messages, max_tokens=80, temperature=0.0, grammar=grammar)
    llama = model.load()
    llama.reset()
    native = llama.create_chat_completion(
        messages=messages, max_tokens=80, temperature=0.0, grammar=llama_cpp.LlamaGrammar.from_string(grammar)
    )
    assert ours.text == native["choices"][0]["message"]["content"]


@pytest.mark.llamacpp
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_small_model_decoding_under_the_grammar_writes_one_action(engine, seed: int) -> None:
    """SmolLM2-135M, sampled warm, told to write several commands and their output: under the grammar
    every reply is prose and exactly one action the parser reads without a note."""
    model, _ = engine
    messages = [
        {"role": "system", "content": "Reply with a plan, then several ```bash blocks, and the output of each."},
        {"role": "user", "content": "List the files, count the lines of app.py and run the tests."},
    ]
    model.seed = seed
    model.load().reset()
    done = model.complete(messages, max_tokens=300, temperature=0.9, grammar=reply_grammar())
    reply = done.text
    parsed = parse_reply(reply, strict=True)
    assert parsed.command or parsed.file_write or parsed.code or parsed.finished, reply
    # No second block ignored, no output of its own after the command; closed unless cut at the budget.
    assert not [n for n in parsed.notes if "were ignored" in n or "output you wrote yourself" in n], parsed.notes
    if done.raw["finish_reason"] == "stop":
        assert reply.count("```") in (0, 2), reply


# --- the loop asks for it ------------------------------------------------------------------------


def _run(tmp_path: Path, model: ScriptedModel, policies: Policies) -> None:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("a\n")
    with HostSandbox(root, channel_for(root)) as box:
        Agent(model, box, EventBus([]), limits=RunLimits(), policies=policies).run("Show a.txt")


def test_the_loop_asks_a_constraining_model_for_the_grammar(tmp_path: Path) -> None:
    model = ScriptedModel(["```bash\ncat a.txt\n```", "DONE: shown"], constrains_replies=True)
    _run(tmp_path, model, Policies.every())
    assert model.grammars == [reply_grammar("", own_lines_barred=True)] * 2


def test_a_reply_stopped_in_its_prose_goes_on_to_its_action(tmp_path: Path) -> None:
    """A reply that a loop or a ramble stopped before its action is no malformed reply: from its prose,
    kept to its last finished sentence, the grammar allows only the action."""
    ramble = "The file holds a. It is shown. The file holds a. It is sh"
    seen: list = []
    for switches in ([], ["action-due=off"]):
        model = ScriptedModel(
            [ramble, "```bash\ncat a.txt\n```", "DONE: shown"],
            constrains_replies=True,
            continues_replies=True,
        )
        root = tmp_path / ("on" if not switches else "off")
        root.mkdir()
        (root / "a.txt").write_text("a\n")
        seen = []
        with HostSandbox(root, channel_for(root)) as box:
            policies = Policies.chosen("small-local", switches)
            policies.on_fired = lambda name, seen=seen: seen.append(PolicyFired(name=name))
            outcome = Agent(model, box, EventBus([seen.append]), policies=policies).run("Show a.txt")
        malformed = [e for e in seen if isinstance(e, FormatError) and not e.verdict]
        asked_again = [e for e in seen if isinstance(e, ReplyAskedAgain)]
        fired = [e for e in seen if isinstance(e, PolicyFired) and e.name == "action-due"]
        if switches:
            assert malformed and not asked_again and not fired and model.prefixes[1] == ""
            continue
        assert len(fired) == 1
        assert outcome.status == "finished" and not malformed
        assert [(e.why, e.text) for e in asked_again] == [("stopped before its action", ramble)]
        kept = "The file holds a. It is shown. The file holds a.\n"
        assert model.prefixes[:2] == ["", kept]
        assert model.grammars[1] == reply_grammar(kept, own_lines_barred=True, action_due=True)
        assert model.grammars[1].startswith("root ::= action\n")
        (first,) = [e for e in seen if isinstance(e, ModelReplied) and e.step == 1]
        assert first.text == kept + "```bash\ncat a.txt\n```"
        prompts = [e for e in seen if isinstance(e, ModelPrompt) and e.step == 1]
        assert [p.progress["action_due"] for p in prompts] == [False, True]
        assert model.grammars[2] == reply_grammar("", own_lines_barred=True)  # the next step as ever


LOOPED = "The tests in test_app.py all pass now.\n"


@pytest.mark.parametrize(
    ("stopped", "kept"),
    [
        ("The file holds a. It is shown. It is sh", "The file holds a. It is shown.\n"),
        ("PLAN:\n1. Look\n2. Fix the", "PLAN:\n1. Look\n"),  # no bare "2." line
        ("See a.py, e.g. now.", "See a.py, e.g. now.\n"),
        (LOOPED * 4 + "The", LOOPED * 2),  # before the loop, or the watcher stops it again
        ("no sentence ends here", ""),
        ("", ""),
    ],
)
def test_stopped_prose_is_cut_back_to_before_its_loop_and_to_a_finished_sentence(stopped: str, kept: str) -> None:
    assert prose_before_loop(stopped) == kept
    assert not repeating(kept + "```bash\nls\n")


def test_barring_own_lines_is_a_policy(tmp_path: Path) -> None:
    model = ScriptedModel(["```bash\ncat a.txt\n```", "DONE: shown"], constrains_replies=True)
    _run(tmp_path, model, Policies.chosen("small-local", ["note-copies=off"]))
    assert model.grammars == [reply_grammar("")] * 2
    assert reply_grammar("") != reply_grammar("", own_lines_barred=True)


def test_the_grammar_is_a_policy_and_other_models_are_not_asked(tmp_path: Path) -> None:
    switched_off = ScriptedModel(["```bash\ncat a.txt\n```", "DONE: shown"], constrains_replies=True)
    _run(tmp_path, switched_off, Policies.chosen("small-local", ["reply-grammar=off"]))
    assert switched_off.grammars == [None, None]
    unconstrained = ScriptedModel(["```bash\ncat a.txt\n```", "DONE: shown"])
    _run(tmp_path, unconstrained, Policies.every())
    assert unconstrained.grammars == [None, None]


def test_a_grammar_decoded_reply_ending_in_done_is_done_whatever_commands_its_prose_names():
    reply = "I ran `python3 -m pytest -q` and it passed.\nDONE: fixed"
    assert parse_reply(reply).command == "python3 -m pytest -q"  # lenient: a listed command runs
    strict = parse_reply(reply, strict=True)
    assert strict.finished and strict.command is None and strict.summary == "fixed"
