"""Policy `changes-shown`: after a command that changed files, the model is shown each one's diff, read
from snapshots on the host (repo.tree_changes), never through a link the sandbox planted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.repo.tree_changes import TreeChanges
from agentcli.session.journal import sessions_dir
from tests.conftest import committed_repo
from tests.test_solve import SANDBOXES, agentcli, solve_json


def told(repo: Path, events: list[dict]) -> list[str]:
    """Every message the model was sent in the run, from its journal."""
    journal = sessions_dir(repo) / events[-1]["session_id"] / "events.jsonl"
    prompts = [json.loads(line) for line in journal.read_text().splitlines()]
    return [m["content"] for e in prompts if e["type"] == "model_prompt" for m in e["messages"] if m["role"] == "user"]


@pytest.fixture
def changelog_repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", {"CHANGELOG.md": "# Changelog\n\n## 1.0\n- First.\n", "app.py": "x = 1\n"})


@pytest.mark.parametrize("backend", SANDBOXES)
def test_a_redirect_shows_what_it_changed_and_a_link_out_shows_nothing(changelog_repo: Path, write_replies, backend):
    repo = changelog_repo
    replies = [
        "```bash\necho '## 1.1' >> CHANGELOG.md\n```",
        # A link to a file the sandbox cannot read on the host's side: its target is never followed.
        "```bash\nln -s /etc/hostname leak.txt && rm app.py && printf 'a\\n' > new.txt\n```",
        "```bash\ncat CHANGELOG.md\n```",
        "DONE: noted",
    ]
    _, events = solve_json(repo, "add a 1.1 heading to the changelog", write_replies(replies), backend)
    messages = told(repo, events)
    assert any(e["type"] == "policy_fired" and e["name"] == "changes-shown" for e in events)
    after_append = next(m for m in messages if "+## 1.1" in m)
    assert "--- a/CHANGELOG.md" in after_append and " - First." in after_append
    after_second = next(m for m in messages if "app.py: deleted" in m)
    assert "new.txt: new file, 1 lines" in after_second
    assert "leak.txt" not in after_second  # a link has no text of its own to show
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
    assert not hostname or hostname not in after_second
    # A command that changed nothing gets no diff.
    after_cat = messages[messages.index(after_second) + 1]
    assert "--- a/" not in after_cat and "@@" not in after_cat


def test_switched_off_no_diff_is_shown(changelog_repo: Path, write_replies, tmp_path: Path):
    replies = ["```bash\necho '## 1.1' >> CHANGELOG.md\n```", "DONE: noted"]
    model = write_replies(replies)
    result = agentcli(
        "solve", "add a heading", "--model", model, "--sandbox", "host", "--json", "--policy", "changes-shown=off",
        cwd=changelog_repo,
    )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert not any("+## 1.1" in m for m in told(changelog_repo, events))
    assert not any(e.get("name") == "changes-shown" for e in events if e["type"] == "policy_fired")


def test_tree_changes_lists_text_files_and_leaves_out_caches_binaries_and_links(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    changes = TreeChanges(repo)
    mark = changes.mark()
    assert mark is not None and changes.since(mark) == []
    (repo / "a.txt").write_text("one\nmore\n")
    (repo / "b.txt").unlink()
    (repo / "c.txt").write_text("three\n")
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "README.txt").write_text("cache\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    (repo / "link.txt").symlink_to(repo / "a.txt")
    found = sorted(changes.since(mark))
    assert found == [("a.txt", "one\n", "one\nmore\n"), ("b.txt", "two\n", None), ("c.txt", None, "three\n")]
    assert len(changes.since(mark, files=1)) == 1
