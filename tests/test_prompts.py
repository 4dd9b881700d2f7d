"""The model's texts live in the templates under agentcli/prompts/: each template compiles and is used,
each one the code names exists, a value not given raises, and no long sentence stays inline."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from jinja2 import UndefinedError

from agentcli import prompts
from agentcli.prompts import environment, family_of, render
from agentcli.session.journal import sessions_dir
from tests.test_solve import agentcli

PACKAGE = Path(__file__).resolve().parents[1] / "agentcli"
PROMPTS = PACKAGE / "prompts"
# Where the code that words messages to the model lives.
MESSAGE_CODE = ("agent", "session", "context")
# Constant text this long (placeholders aside) that reads as a sentence belongs in a template.
SENTENCE_CHARS = 40
_SENTENCE_START = re.compile(r"[A-Z`]|\{\} [a-z]")  # "Not run: ...", "`> f` ...", "{path} was created ..."


def _templates() -> list[str]:
    return sorted(str(path.relative_to(PROMPTS).with_suffix("")) for path in PROMPTS.rglob("*.md"))


def _rendered_names() -> dict[str, str]:
    """The template names the package's code renders, each with a place that renders it: calls of
    `render` (or `partial(render, ...)`) whose name is a string, or one of two in a conditional."""
    names: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            args = node.args
            if isinstance(node.func, ast.Name) and node.func.id == "partial" and len(args) > 1:
                if isinstance(args[0], ast.Name) and args[0].id == "render":
                    args = args[1:]
                else:
                    continue
            elif not (isinstance(node.func, ast.Name) and node.func.id == "render"):
                continue
            first = args[0]
            choices = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
            for choice in choices:
                if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                    names.setdefault(choice.value, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return names


def test_every_template_compiles_and_ends_its_last_line():
    for name in _templates():
        environment().get_template(f"{name}.md")  # a syntax error raises here
        assert (PROMPTS / f"{name}.md").read_text().endswith("\n"), f"{name}.md: the last line has no line end"


def test_every_template_is_rendered_by_some_code():
    unused = set(_templates()) - set(_rendered_names())
    assert not unused, f"templates no code renders: {sorted(unused)}"


def test_every_template_the_code_renders_exists():
    missing = {name: where for name, where in _rendered_names().items() if name not in _templates()}
    assert not missing, f"rendered but not in agentcli/prompts/: {missing}"


def test_a_value_not_given_raises():
    with pytest.raises(UndefinedError):
        render("system")
    with pytest.raises(UndefinedError):
        render("refusals/repeated_failure", path="app.py", line=1)


def test_a_template_keeps_its_text_to_the_last_character():
    """The file's own last line end is no part of the text; a text's other line ends and spaces are."""
    assert render("format_errors/no_command_ran", error="x") == "[no command ran] x"
    assert render("begun/command") == "```bash\n"
    assert render("objections/echoed_done", copied="", reminder="").endswith("done: ")
    assert render("task", task="Fix it.", context="") == "Task: Fix it."
    assert render("task", task="Fix it.", context="Files:\na.py") == "Task: Fix it.\n\nFiles:\na.py"


def _constant_texts(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Each string constant (an f-string whole, `{}` for its values) with its line, leaving out
    docstrings, regular expressions and the messages of exceptions raised (the user's, not the model's)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        is_regex = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        )
        if is_regex or isinstance(node, ast.Raise):
            skipped |= {id(inner) for inner in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            skipped |= {id(value) for value in node.values}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            yield node.lineno, text
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_sentence_for_the_model_stays_inline():
    found = []
    for folder in MESSAGE_CODE:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            where = str(path.relative_to(PACKAGE.parent))
            for line, text in _constant_texts(ast.parse(path.read_text())):
                words = text.replace("{}", "").strip()
                if len(words) >= SENTENCE_CHARS and " " in words and _SENTENCE_START.match(text):
                    found.append(f"{where}:{line}: {text[:80]!r}")
    assert not found, "sentences for the model belong in agentcli/prompts/:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("local/qwen2.5-coder-1.5b", "qwen"),
        ("openai/gpt-4o-mini", "gpt"),
        ("anthropic/claude-3-5-sonnet", "claude"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama"),
        ("ollama/llama3.2:3b", "llama"),
    ],
)
def test_a_models_family_comes_from_its_name(model: str, family: str):
    assert family_of(model) == family


def test_the_users_templates_and_a_familys_replace_the_built_in_ones(tmp_path: Path):
    (tmp_path / "families" / "qwen").mkdir(parents=True)
    (tmp_path / "system.md").write_text("Mine, in {{ workdir }}.\n")
    (tmp_path / "families" / "qwen" / "task.md").write_text("Qwen's: {{ task }}\n")
    built_in_task = render("task", task="T", context="")
    try:
        prompts.choose(tmp_path, "gpt")
        assert render("system", workdir="/w") == "Mine, in /w."
        assert render("task", task="T", context="") == built_in_task  # another family's is not used
        prompts.choose(tmp_path, "qwen")
        assert render("task", task="T", context="") == "Qwen's: T"
    finally:
        prompts.choose()
    assert render("system", workdir="/w") != "Mine, in /w."


def test_solve_sends_the_users_own_system_prompt(failing_repo: Path, tmp_path: Path):
    own = tmp_path / "my-prompts"
    own.mkdir()
    (own / "system.md").write_text("Work in {{ workdir }}, one command a reply.\n")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["```bash\nls\n```", "DONE: looked"]))
    result = agentcli(
        "solve", "Look around.", "--model", f"scripted:{replies}", "--sandbox", "host", "--json",
        cwd=failing_repo, env={"AGENTCLI_PROMPTS": str(own)},
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    (journal,) = sessions_dir(failing_repo).glob("*/events.jsonl")
    prompts_sent = [json.loads(line) for line in journal.read_text().splitlines() if '"model_prompt"' in line]
    system = prompts_sent[0]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Work in ")
    missing = agentcli(
        "solve", "x", "--sandbox", "host", cwd=failing_repo, env={"AGENTCLI_PROMPTS": str(tmp_path / "no")}
    )
    assert missing.returncode != 0 and "is not a folder" in missing.stderr and "Traceback" not in missing.stderr


def test_templates_in_the_work_tree_are_never_rendered(failing_repo: Path):
    """The sandbox can write there: a template it wrote would run on the host when rendered."""
    planted = failing_repo / ".prompts"
    planted.mkdir()
    (planted / "system.md").write_text("{{ cycler.__init__.__globals__ }}\n")
    result = agentcli("solve", "x", "--sandbox", "host", cwd=failing_repo, env={"AGENTCLI_PROMPTS": str(planted)})
    assert result.returncode == 2 and "inside the repository" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
