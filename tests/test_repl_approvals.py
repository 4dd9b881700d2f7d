"""Approval modes and the edit classifier behind `auto-edit`; the streamed-prose filter of the REPL."""

from __future__ import annotations

import pytest

from agentcli.agent.edits import write_command
from agentcli.errors import UsageError
from agentcli.ui.approval import ALWAYS, EDIT, NO, YES, Answer, Approvals, default_mode, parse_mode
from agentcli.ui.edits import CommandKind, classify
from agentcli.ui.live import ProseStream


def inside(path: str) -> bool:
    """The workspace as the tests see it: relative paths that do not climb out."""
    return not path.startswith("/") and ".." not in path.split("/")


EDITS = [
    "cat > f.py <<'EOF'\nprint(1)\nEOF",
    "cat <<EOF > f\nhello $USER\nEOF",
    "sed -i 's/a - b/a + b/' calc.py",
    "sed -i -e 's|a|b|g' -e '3s/x/y/' calc.py",
    "mkdir -p src/pkg && touch src/pkg/__init__.py",
    "echo hi > out.txt",
    "printf 'x\\n' >> notes.txt; echo done",
    "tee out.txt <<'EOF'\nhello\nEOF",
    "echo hi 2>/dev/null > f",
    "patch -p1 <<'EOF'\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\nEOF",
    "git apply <<'EOF'\n--- a/calc.py\n+++ b/calc.py\nEOF",
    "cat > a.txt <<'A'\n1\nA\ncat > b.txt <<'B'\n2\nB",
    write_command("src/new module.py", "x = 1\n"),  # what the loop runs for a path-and-block edit
]

NOT_EDITS = {
    "cat > f.py <<EOF\n$(rm -rf ~)\nEOF": "command substitution",
    "echo $(whoami) > f": "command substitution",
    "echo `id` > f": "command substitution",
    "cat > /etc/passwd <<'EOF'\nx\nEOF": "outside the workspace",
    "echo hi > ../out.txt": "outside the workspace",
    "echo hi > $HOME/x": "outside the workspace",
    "echo hi > .git/hooks/pre-commit": "outside the workspace",
    "sed -i 's/a/b/e' calc.py": "beyond plain substitutions",
    "sed -i 's/a/b/w /tmp/x' calc.py": "beyond plain substitutions",
    "sed 's/a/b/' calc.py": "prints rather than edits",
    "echo hi | tee out.txt": "pipes",
    "python3 -m pytest -q": "not an editing command",
    "rm -rf build": "not an editing command",
    "cd /tmp && touch x": "not an editing command",
    "X=1 touch f": "not a plain program name",
    "cat calc.py": "cat reads files",
    "patch -p1 <<'EOF'\n--- a/../evil\n+++ b/../evil\nEOF": "a patch naming",
    "cat > a.txt <<'EOF'\nunterminated": "unterminated here-document",
    "echo 'unbalanced > f": "unbalanced quotes",
    "touch f &": "background",
}


@pytest.mark.parametrize("command", EDITS)
def test_workspace_edits_are_edits(command: str):
    kind = classify(command, inside)
    assert kind.edit, kind.reason
    assert kind.targets and all(inside(t) or t == "/dev/null" for t in kind.targets)


@pytest.mark.parametrize(("command", "why"), NOT_EDITS.items())
def test_everything_else_is_a_command(command: str, why: str):
    kind = classify(command, inside)
    assert not kind.edit
    assert why in kind.reason


def test_programs_name_the_kind_for_always():
    assert classify("python3 -m pytest -q", inside).programs == ("python3",)
    assert classify("grep -c x f | wc -l", inside).programs == ("grep", "wc")
    assert classify("echo $(id)", inside).programs is None  # unreadable: no "always" can cover it
    assert classify("sed -i 's/a/b/' f", inside).label == "file edits in the workspace"


class Asker:
    """Answers approval questions from a list and records what was asked."""

    def __init__(self, *answers: Answer):
        self.answers = list(answers)
        self.asked: list[tuple[str, CommandKind]] = []

    def __call__(self, command: str, kind: CommandKind) -> Answer:
        self.asked.append((command, kind))
        return self.answers.pop(0)


EDIT_COMMAND = "echo hi > notes.txt"


def test_suggest_asks_for_everything_and_auto_edit_only_for_commands():
    asker = Asker(Answer(YES), Answer(YES))
    approvals = Approvals("suggest", inside, asker)
    assert approvals(EDIT_COMMAND).run and approvals("ls").run
    assert [c for c, _ in asker.asked] == [EDIT_COMMAND, "ls"]

    asker = Asker(Answer(YES))
    approvals = Approvals("auto-edit", inside, asker)
    assert approvals(EDIT_COMMAND).run
    assert approvals("ls").run
    assert [c for c, _ in asker.asked] == ["ls"]


def test_full_auto_asks_nothing():
    approvals = Approvals("full-auto", inside, Asker())
    assert approvals("rm -rf build").run


def test_no_edit_and_always():
    asker = Asker(Answer(NO, "too risky"), Answer(EDIT, "ls -la"), Answer(EDIT, "  "), Answer(ALWAYS))
    approvals = Approvals("suggest", inside, asker)
    declined = approvals("rm -rf build")
    assert not declined.run and "They said: too risky" in declined.message
    edited = approvals("ls")
    assert edited.run and edited.command == "ls -la"
    emptied = approvals("ls")
    assert not emptied.run and "removed the command" in emptied.message
    assert approvals("python3 -c 'print(1)'").run  # "always" for python3
    assert approvals("python3 -m pytest").run  # not asked again
    assert len(asker.asked) == 4
    assert asker.answers == []


def test_always_for_edits_covers_later_edits_only():
    asker = Asker(Answer(ALWAYS), Answer(YES))
    approvals = Approvals("suggest", inside, asker)
    approvals(EDIT_COMMAND)
    approvals("touch other.txt")
    approvals("ls")
    assert [c for c, _ in asker.asked] == [EDIT_COMMAND, "ls"]


def test_modes_and_defaults():
    assert default_mode("host") == "suggest"
    assert default_mode("bwrap") == default_mode("docker") == "auto-edit"
    assert parse_mode("auto_edit") == "auto-edit" and parse_mode("FULL-AUTO") == "full-auto"
    with pytest.raises(UsageError, match="did you mean suggest"):
        parse_mode("sugest")


def stream(text: str, step: int) -> str:
    prose = ProseStream()
    pieces = [prose.feed(text[i : i + step]) for i in range(0, len(text), step)]
    return "".join(pieces) + prose.finish()


@pytest.mark.parametrize("step", [1, 2, 7, 1000])
def test_streamed_prose_hides_code_blocks_whatever_the_pieces(step: int):
    reply = (
        "\n\nPLAN:\n1. Run the tests.\n2. Fix.\n\n```bash\npython3 -m pytest -q\n```\n\n"
        "Then `see` it.\n~~~\nx\n~~~\nDONE"
    )
    assert stream(reply, step) == "PLAN:\n1. Run the tests.\n2. Fix.\n\nThen `see` it.\nDONE\n"


def test_streamed_prose_of_an_unclosed_block_shows_nothing_of_it():
    assert stream("Running it:\n```bash\nls -la\n", 3) == "Running it:\n"
