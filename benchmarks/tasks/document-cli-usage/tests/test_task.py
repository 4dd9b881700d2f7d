"""Outcome checks for document-cli-usage."""

import os
import re
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
DATA = Path(__file__).parent / "data"
OPTIONS = ["--column", "--delimiter", "--skip-empty", "--json"]


def headings(lines):
    """(index, level, title) of each Markdown heading outside fenced code blocks."""
    found, fenced = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m and not fenced:
            found.append((i, len(m.group(1)), m.group(2)))
    return found


def usage_section():
    lines = (WORKDIR / "README.md").read_text(encoding="utf-8").splitlines()
    heads = headings(lines)
    for n, (i, level, title) in enumerate(heads):
        if re.search(r"\busage\b", title, re.IGNORECASE):
            end = next((j for j, lvl, _ in heads[n + 1 :] if lvl <= level), len(lines))
            return "\n".join(lines[i + 1 : end])
    raise AssertionError("README.md has no Usage heading")


def test_usage_section_has_an_example():
    section = usage_section()
    assert re.search(r"csvstat(\.py)?\s+\S", section), "no example command in the Usage section"


def test_every_option_is_described():
    section = usage_section()
    missing = [opt for opt in OPTIONS if opt not in section]
    assert not missing, f"options not described in the Usage section: {missing}"


def test_rest_of_readme_kept():
    text = " ".join((WORKDIR / "README.md").read_text(encoding="utf-8").split())
    original = (DATA / "README.md.orig").read_text(encoding="utf-8")
    for paragraph in re.split(r"\n\s*\n", original):
        paragraph = " ".join(paragraph.split())
        if paragraph:
            assert paragraph in text, f"lost from README.md: {paragraph!r}"
