"""`agentcli sessions`, `agentcli show` and `agentcli sessions prune` on journals of real runs of the CLI."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from agentcli.session.journal import sessions_dir
from tests.conftest import FIX_REPLIES
from tests.test_solve import agentcli

SCRIPT = "<script>document.title='pwned'</script>"
# A step whose reply and output carry markup: the page must show it as text.
MARKUP_REPLIES = [
    FIX_REPLIES[0],
    'Look at this <img src=x onerror=alert(1)> first.\n```bash\necho "' + SCRIPT + '"\n```',
    *FIX_REPLIES[1:],
]


def solve(repo: Path, write_replies, replies: list[str] = FIX_REPLIES, task: str = "fix it") -> str:
    """Run `agentcli solve` for real and return its session id."""
    result = agentcli("solve", task, "--model", write_replies(replies), "--sandbox", "host", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["type"] == "result" and final["status"] == "finished"
    return final["session_id"]


def copy_session(repo: Path, session: str, new_id: str, *, drop_last: int = 0, age_s: float = 0) -> Path:
    """A copy of a session's folder under another id, its journal cut short by `drop_last` lines, its folder and
    journal last written `age_s` seconds ago."""
    folder = sessions_dir(repo)
    copy = folder / new_id
    shutil.copytree(folder / session, copy)
    journal = copy / "events.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[: len(lines) - drop_last]).replace(session, new_id))
    if age_s:
        set_age(copy, age_s)
    return copy


def set_age(folder: Path, age_s: float) -> None:
    then = time.time() - age_s
    for path in (folder / "events.jsonl", folder):
        os.utime(path, (then, then), follow_symlinks=False)


def test_list_and_show(failing_repo: Path, write_replies):
    session = solve(failing_repo, write_replies)
    listing = agentcli("sessions", cwd=failing_repo)
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.splitlines()[:2]
    for column in ("SESSION", "AGE", "STATUS", "STEPS", "TOKENS", "COST", "SANDBOX", "MODEL", "TASK"):
        assert column in header
    assert row.startswith(session) and re.search(
        r"\s\d+[smhdw]\s+finished\s+4\s+[\d.]+k?\s+-\s+host\s+scripted\s+fix it$", row
    ), row
    assert max(len(line) for line in listing.stdout.splitlines()[:2]) <= 100

    # Every repository: the host path of this one is recognised from its runs.
    everything = agentcli("sessions", "--all", cwd=failing_repo.parent)
    assert everything.returncode == 0, everything.stderr
    assert f"repository: {failing_repo.resolve()}\n{session}" in everything.stdout
    assert max(len(line) for line in everything.stdout.splitlines()[:3]) <= 100

    shown = agentcli("show", cwd=failing_repo)  # the latest
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "fix it" in out and session in out and "scripted:" in out and "host" in out
    assert "1. Run the tests" in out  # the plan
    assert "$ sed -i 's/a - b/a + b/' calc.py" in out and "add subtracts instead of adding." in out
    assert "assert -1 == 5" in out and "1 passed" in out and "exit 1" in out and "exit 0" in out
    assert "finished: the model declared the task finished" in out
    assert "1 file changed" in out and "files changed: calc.py" in out
    assert "checking before finishing" in out  # a notice

    # A unique prefix names it; from outside the repository too.
    assert agentcli("show", session[:17], cwd=failing_repo).stdout == out
    elsewhere = agentcli("show", session[:17], cwd=failing_repo.parent)
    assert elsewhere.returncode == 0 and "fix it" in elsewhere.stdout


def test_unknown_ambiguous_and_unfinished_sessions(failing_repo: Path, write_replies):
    session = solve(failing_repo, write_replies)
    for args, message in (
        (["show", "nosuchsession"], "no session 'nosuchsession'"),
        (["show", "2"], "ambiguous"),
    ):
        if message == "ambiguous":
            copy_session(failing_repo, session, session[:-6] + "ffffff")
        result = agentcli(*args, cwd=failing_repo)
        assert result.returncode == 2, (result.returncode, result.stderr)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr

    # A killed run: no result event, and in the second case not even the end of its last command.
    killed = copy_session(failing_repo, session, "20000101-000000-aaaaaa", drop_last=1)
    with (killed / "events.jsonl").open("a") as journal:  # events of later versions are shown too
        journal.write('{"type": "model_switched", "from_model": "a/one", "to_model": "b/two", "reason": "down"}\n')
        journal.write('{"type": "from_the_future", "answer": 42}\n')
    shown = agentcli("show", killed.name, cwd=failing_repo)
    assert shown.returncode == 0, shown.stderr
    assert "unfinished" in shown.stdout and "no result" in shown.stdout and "1 passed" in shown.stdout
    assert "model switched: a/one → b/two (down)" in shown.stdout and "from_the_future: answer=42" in shown.stdout
    lines = (killed / "events.jsonl").read_text().splitlines()
    last_finished = max(i for i, line in enumerate(lines) if '"command_finished"' in line)
    (killed / "events.jsonl").write_text("\n".join(lines[:last_finished]) + '\n{"type": "mod')
    shown = agentcli("show", killed.name, cwd=failing_repo)
    assert shown.returncode == 0, shown.stderr
    assert "the run stopped during this command" in shown.stdout
    listing = agentcli("sessions", cwd=failing_repo).stdout
    assert re.search(r"20000101-000000-aaaaaa\s+\S+\s+unfinished\s+3\s", listing), listing
    page = agentcli("show", killed.name, "--html", str(failing_repo.parent / "k.html"), cwd=failing_repo)
    assert page.returncode == 0 and "unfinished" in (failing_repo.parent / "k.html").read_text()


def test_html_page_is_self_contained_and_escaped(failing_repo: Path, write_replies):
    session = solve(failing_repo, write_replies, MARKUP_REPLIES, task='fix it <b>now</b> & "well"')
    target = failing_repo.parent / "run.html"
    result = agentcli("show", session, "--html", str(target), cwd=failing_repo)
    assert result.returncode == 0, result.stderr
    page = target.read_text()
    assert page.startswith("<!doctype html>") and "<style>" in page
    # Nothing is fetched: no address of any kind, no script, a policy that forbids both.
    assert "http://" not in page and "https://" not in page and "//" not in page.replace("://", "")
    assert "<script" not in page.lower() and "src=" not in page.replace("src=x", "")
    assert "default-src 'none'" in page
    # Journal text appears as text.
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<img" not in page
    assert "fix it &lt;b&gt;now&lt;/b&gt; &amp; &quot;well&quot;" in page
    assert page.count("<details class=step") == 5 and "1 file changed" in page and "Run the tests again" in page


def test_terminal_view_neutralises_escape_sequences(failing_repo: Path, write_replies):
    reply = "```bash\nprintf 'a\\033]0;title\\007b\\033[2Jc\\r\\n'\n```"
    session = solve(failing_repo, write_replies, [FIX_REPLIES[0], reply, *FIX_REPLIES[1:]])
    shown = agentcli("show", session, cwd=failing_repo)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "abc" in shown.stdout


def test_prune(failing_repo: Path, write_replies):
    session = solve(failing_repo, write_replies)
    old = copy_session(failing_repo, session, "20000101-000000-000001", age_s=40 * 86400)
    older = copy_session(failing_repo, session, "20000101-000000-000000", age_s=50 * 86400)
    recent = copy_session(failing_repo, session, "20000101-000000-000002", age_s=20 * 60)
    # A link named like a session, to a folder outside the state: neither it nor what it points to is touched.
    outside = failing_repo.parent / "precious"
    outside.mkdir()
    (outside / "events.jsonl").write_text("{}\n")
    link = sessions_dir(failing_repo) / "20000101-000000-0000ff"
    link.symlink_to(outside, target_is_directory=True)
    set_age(outside, 90 * 86400)
    os.utime(link, (0, 0), follow_symlinks=False)

    bad = agentcli("sessions", "prune", "--older-than", "30x", cwd=failing_repo)
    assert bad.returncode == 2 and "bad --older-than '30x'" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    nothing = agentcli("sessions", "prune", cwd=failing_repo)
    assert nothing.returncode == 2 and "--older-than" in nothing.stderr

    dry = agentcli("sessions", "prune", "--older-than", "30d", "--dry-run", cwd=failing_repo)
    assert dry.returncode == 0 and "would remove 2 runs" in dry.stdout and old.is_dir()

    pruned = agentcli("sessions", "prune", "--older-than", "30d", cwd=failing_repo)
    assert pruned.returncode == 0, pruned.stderr
    assert f"removed {old.name}" in pruned.stdout and f"removed {older.name}" in pruned.stdout
    assert not old.exists() and not older.exists()
    assert recent.is_dir() and (sessions_dir(failing_repo) / session).is_dir()
    assert link.is_symlink() and (outside / "events.jsonl").is_file()

    # --keep: the newest N stay; a run written to in the last 10 minutes is never deleted.
    kept = agentcli("sessions", "prune", "--keep", "0", "--all", cwd=failing_repo.parent)
    assert kept.returncode == 0, kept.stderr
    assert f"removed {recent.name}" in kept.stdout and f"kept {session}" in kept.stdout
    assert "may still be running" in kept.stdout
    assert (sessions_dir(failing_repo) / session).is_dir() and not recent.exists()
    assert link.is_symlink() and (outside / "events.jsonl").is_file()


# A real browser renders the page.


def png_size_and_rows(path: Path) -> tuple[int, int, int]:
    """Width, height and the number of distinct scanlines of a PNG (a blank page has very few)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, header = 8, b"", None
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    assert header is not None
    width, height, depth, colour = header[:4]
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    stride = 1 + width * channels * depth // 8
    raw = zlib.decompress(idat)
    assert len(raw) == stride * height
    rows = {raw[i : i + stride] for i in range(0, len(raw), stride)}
    return width, height, len(rows)


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (apt-get install chromium)")
def test_page_in_a_real_browser(failing_repo: Path, write_replies, tmp_path: Path):
    session = solve(failing_repo, write_replies, MARKUP_REPLIES)
    page = tmp_path / "page.html"
    assert agentcli("show", session, "--html", str(page), cwd=failing_repo).returncode == 0

    shot = tmp_path / "page.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1200,1600", "--hide-scrollbars", page.as_uri())
    assert shot.is_file(), result.stderr[-2000:]
    width, height, rows = png_size_and_rows(shot)
    assert (width, height) == (1200, 1600)
    assert shot.stat().st_size > 20_000 and rows > 200, "the page rendered blank"
    if keep := os.environ.get("AGENTCLI_KEEP_SCREENSHOT"):
        shutil.copy(shot, keep)

    # The markup from the journal stays text even with the page's policy taken away: nothing runs.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<meta http-equiv=Content-Security-Policy[^>]*>", "", page.read_text()))
    for source in (page, bare):
        dom = chromium("--dump-dom", source.as_uri())
        assert dom.returncode == 0, dom.stderr[-2000:]
        assert "<title>agentcli · fix it</title>" in dom.stdout and "pwned</title>" not in dom.stdout
        assert "<script" not in dom.stdout and "<img" not in dom.stdout
        assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom.stdout
        assert "Step 2" in dom.stdout and "1 file changed" in dom.stdout
