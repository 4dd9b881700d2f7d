"""What the model is shown of the repository before its first command: file list, contents, map."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agentcli.config import Settings
from agentcli.models.base import estimate_tokens
from agentcli.repo.excerpts import select_excerpts
from agentcli.repo.overview import list_files, repository_overview
from tests.conftest import git


def small_repo(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "app" / "pager.py").write_text("def pages(n, per):\n    return n // per\n")
    (root / "app" / "util.py").write_text("def clamp(x):\n    return max(0, x)\n")
    (root / "logs").mkdir()
    (root / "logs" / "big.log").write_text("".join(f"2024-01-01 INFO line {i}\n" for i in range(5000)))
    (root / "data.bin").write_bytes(b"\0\1\2" * 100)
    git(root, "init", "-q")
    return root


def test_small_code_is_shown_whole_and_the_named_file_first(tmp_path: Path):
    repo = small_repo(tmp_path)
    text = repository_overview(repo, "Fix the page count in app/pager.py", Settings())
    assert text.index("app/pager.py:\n```python\ndef pages(n, per):") < text.index("app/util.py:\n```python")
    assert "big.log" in text and "INFO line 0" not in text  # a log the task does not name: listed only
    assert "\\x00" not in text and "data.bin:" not in text  # binary files are never shown
    assert "Map of the code" not in text  # every code file is shown whole: no map needed


def test_a_named_big_file_is_shown_by_its_head(tmp_path: Path):
    repo = small_repo(tmp_path)
    text = repository_overview(repo, "Count the lines of logs/big.log per level", Settings())
    assert "logs/big.log (first 20 of 5000 lines):" in text
    assert "INFO line 19\n```" in text and "INFO line 20\n" not in text


def test_excerpts_stay_within_their_budget_and_can_be_turned_off(tmp_path: Path):
    repo = tmp_path
    for i in range(30):
        (repo / f"mod{i:02}.py").write_text("".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(20)))
    files = sorted(p.name for p in repo.iterdir())
    chosen = select_excerpts(repo, files, "tidy mod07.py", 800)
    assert chosen[0].path == "mod07.py"
    assert 0 < sum(estimate_tokens(e.render()) for e in chosen) <= 800
    assert select_excerpts(repo, files, "tidy mod07.py", 0) == []
    text = repository_overview(repo, "tidy mod07.py", dataclasses.replace(Settings(), file_view_tokens=0))
    assert "```" not in text and "Map of the code" in text


def test_overview_leaves_out_agentcli_files(tmp_path: Path):
    repo = small_repo(tmp_path)
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "x.json").write_text("{}")
    assert not any(f.startswith(".agentcli/") for f in list_files(repo))
