"""A here-document that writes code is written as it stands (policy `literal-heredoc`), run by bash."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.agent.heredocs import quote_code_heredocs

SCRIPT = '#!/bin/bash\ndir=${1:-.}\nfind "$dir" -name "*.py" | wc -l\necho "$(date +%Y)" `whoami`\n'


def _bash(command: str, where: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=where, check=True, capture_output=True)


@pytest.mark.parametrize(
    ("command", "path"),
    [
        (f"mkdir -p tools && cat <<EOF > tools/count.sh\n{SCRIPT}EOF\nchmod +x tools/count.sh", "tools/count.sh"),
        (f"cat > count << END\n{SCRIPT}END", "count"),  # no suffix: its #! line says it is a script
        (f"cat >> 'count.sh' <<-EOF\n{SCRIPT}\tEOF", "count.sh"),
        (f"tee -a count.sh <<EOF >/dev/null\n{SCRIPT}EOF", "count.sh"),
    ],
    ids=["cat-after", "no-suffix", "append-tabs", "tee"],
)
def test_a_script_written_by_a_here_document_gets_its_text_as_written(tmp_path: Path, command: str, path: str):
    quoted = quote_code_heredocs(command)
    assert quoted is not None and quoted[1] == [path]
    _bash(quoted[0], tmp_path)
    assert (tmp_path / path).read_text() == SCRIPT


def test_every_here_document_of_a_command_is_judged_apart(tmp_path: Path):
    command = (
        "cat > a.sh <<EOF\necho $1\nEOF\ncat > b.txt <<EOF\nhome is $HOME\nEOF\ncat > c.md <<EOF\nRun `make`.\nEOF"
    )
    quoted = quote_code_heredocs(command)
    assert quoted is not None and quoted[1] == ["a.sh", "c.md"]
    _bash(quoted[0], tmp_path)
    assert (tmp_path / "a.sh").read_text() == "echo $1\n"
    assert (tmp_path / "b.txt").read_text() == f"home is {Path.home()}\n"  # a text file: expanded as asked
    assert (tmp_path / "c.md").read_text() == "Run `make`.\n"


@pytest.mark.parametrize(
    "command",
    [
        "cat > run.sh <<'EOF'\necho $1\nEOF",  # quoted already
        'cat > run.sh <<"EOF"\necho $1\nEOF',
        "cat > run.sh <<\\EOF\necho $1\nEOF",
        "cat > run.sh <<EOF\necho \\$1 in $PWD\nEOF",  # an escape: the expansion is meant
        "cat > run.sh <<EOF\necho hello\nEOF",  # nothing to expand
        "cat > .env <<EOF\nHOME=$HOME\nEOF",  # settings, not code
        "python3 - <<EOF\nprint('$x')\nEOF",  # no file written
        "cat > run.sh <<EOF\necho $1\n",  # never ends: bash's own error is the model's to see
        "cat <<<$x > run.sh",
        "for i in 1 2 3; do\ncat > test_$i.py <<EOF\nprint($i)\nEOF\ndone",  # a generator: meant
        "for i in 1 2\ndo\ncat > step.sh <<EOF\necho $i\nEOF\ndone",
        "cat > step.sh <<EOF\necho step $((i+1))\nEOF",  # arithmetic
        "X=hello; cat > r.sh <<EOF\necho $X $1\nEOF",  # a value the command set for it
        "echo '#!/bin/sh' > run.sh && cat >> settings.env <<EOF\nDATA_DIR=$PWD/data\nEOF",  # not to run.sh
        'python3 - > report.md <<EOF\nprint("value: $X")\nEOF',  # fed to a program, not written
        "cat > gen.sh <<'OUTER'\ncat > out.sh <<EOT\necho $1\nEOT\nOUTER",  # inside a quoted body
    ],
)
def test_here_documents_left_as_they_are(command: str):
    assert quote_code_heredocs(command) is None
