"""The interactive session in a real pseudo-terminal: the CLI as a user types at it.

Each test starts `python -m agentcli repl` (or `agentcli` alone) in a pty with a scripted model,
types tasks and keys, and checks what appears on the screen and what happened to the repository.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentcli.sandbox.local import bwrap_available
from agentcli.session.journal import sessions_dir
from tests.conftest import FIX_REPLIES, GIT_ENV, git

pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install -e .[dev])")

# Escape sequences a terminal interprets rather than shows: colours, cursor moves, titles, modes.
_ESCAPES = re.compile(
    r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MNc]"
)
ORIGINAL_CALC = "def add(a, b):\n    return a - b\n"


class Terminal:
    """agentcli in a pseudo-terminal. `expect` waits for text to show, searching on from the last match."""

    def __init__(self, args: list[str], cwd: Path, home: Path, env: dict[str, str] | None = None):
        environment = {
            **os.environ,
            **GIT_ENV,
            "TERM": "xterm-256color",
            # Nothing here answers cursor-position requests; without them prompt_toolkit hides the
            # bottom toolbar (the REPL prints the same status line after each task).
            "PROMPT_TOOLKIT_NO_CPR": "1",
            "AGENTCLI_CONFIG_DIR": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            **(env or {}),
        }
        environment.pop("COLUMNS", None)
        environment.pop("LINES", None)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "agentcli", *args],
            cwd=str(cwd),
            env=environment,
            dimensions=(45, 150),
            encoding="utf-8",
            codec_errors="replace",
        )
        self.raw = ""
        self.pos = 0

    @property
    def text(self) -> str:
        """Everything shown so far, without escape sequences and carriage returns."""
        return _ESCAPES.sub("", self.raw).replace("\r", "")

    def _pump(self, wait: float) -> bool:
        try:
            chunk = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += chunk
        return True

    def expect(self, needle: str, timeout: float = 30, advance: bool = True) -> None:
        """Wait for `needle` after the last match; `advance=False` leaves the search position as it was."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.text.find(needle, self.pos)
            if found >= 0:
                if advance:
                    self.pos = found + len(needle)
                return
            alive = self._pump(0.1)
            if not alive or time.monotonic() > deadline:
                why = "the program ended" if not alive else f"{timeout:g}s passed"
                raise AssertionError(f"{needle!r} did not appear ({why}); the screen so far:\n{self.text[-4000:]}")

    def _settle(self, quiet: float = 0.25, longest: float = 5) -> None:
        """Wait until the screen stops changing, as a person would before typing at a fresh prompt."""
        deadline = time.monotonic() + longest
        while time.monotonic() < deadline:
            before = len(self.raw)
            if not self._pump(quiet) or len(self.raw) == before:
                return

    def type(self, line: str) -> None:
        """Type a line and Enter once a prompt shows (a prompt just matched by `expect` counts)."""
        self.pos = max(0, self.pos - 1)
        self.expect("›")
        self.key(line + "\r")

    def key(self, keys: str) -> None:
        self._settle()
        self.child.send(keys)

    def ctrl_c(self) -> None:
        self._settle()
        self.child.sendintr()

    def wait_exit(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self._pump(0.1):
            if time.monotonic() > deadline:
                self.child.terminate(force=True)
                raise AssertionError(f"agentcli did not exit; the screen so far:\n{self.text[-3000:]}")
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else 128 + (self.child.signalstatus or 0)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def start(tmp_path: Path):
    """Start agentcli in a pty: start(repo, *args, env=...); every terminal is closed afterwards."""
    terminals: list[Terminal] = []

    def launch(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Terminal:
        term = Terminal(list(args), cwd, tmp_path / "home", env)
        terminals.append(term)
        return term

    yield launch
    for term in terminals:
        term.close()


def processes_in(root: Path) -> list[str]:
    """Processes whose working directory is inside `root` (a sandbox shell left behind would be one)."""
    found = []
    resolved = str(root.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd == resolved or cwd.startswith(resolved + "/"):
            found.append(f"{proc.name}: {cmdline}")
    return found


def journal_events(repo: Path) -> list[dict]:
    events = []
    for path in sessions_dir(repo).glob("*/events.jsonl"):
        events += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return events


def test_task_approval_output_diff_undo_exit(failing_repo: Path, write_replies, start):
    """The issue's walk-through: a task, approvals, live output, /diff, /undo, Ctrl-D."""
    term = start(failing_repo, "repl", "--model", write_replies(FIX_REPLIES), "--sandbox", "host")
    term.expect("sandbox host")
    term.expect("mode suggest")
    term.expect("commands run on this machine, unisolated: each one asks first")
    term.type("fix the failing test")
    term.expect("Run the tests.")  # the reply's prose, streamed
    term.expect("python3 -m pytest -q")
    term.expect("Run it? [y]es  [n]o  [e]dit  [a]lways for python3")
    term.key("y")
    term.expect("1 failed")
    term.expect("exit 1")
    term.expect("sed -i 's/a - b/a + b/' calc.py")
    term.expect("[a]lways for file edits in the workspace")
    assert (failing_repo / "calc.py").read_text() == ORIGINAL_CALC  # nothing ran before the yes
    term.key("y")
    term.expect("exit 0")
    term.expect("Run it?")
    term.key("y")
    term.expect("1 passed")
    term.expect("finished: add() now returns a + b and the test passes.")
    term.expect("calc.py | 2 +-")
    term.expect("host sandbox · suggest · ")  # the status line: model, sandbox, mode, tokens, context, cost
    term.expect(" tokens · context ")
    assert "return a + b" in (failing_repo / "calc.py").read_text()

    term.type("/diff")
    term.expect("-    return a - b")
    term.expect("+    return a + b")
    term.type("/undo")
    term.expect("undone: the repository is back to before the last task")
    assert (failing_repo / "calc.py").read_text() == ORIGINAL_CALC
    term.type("/diff")
    term.expect("no changes since the session started")

    term.key("\x04")  # Ctrl-D
    term.expect("saved in")
    assert term.wait_exit() == 0
    assert processes_in(failing_repo) == []
    assert git(failing_repo, "status", "--porcelain") == ""
    types = [e["type"] for e in journal_events(failing_repo)]
    assert types[0] == "run_started" and "result" in types and types.count("command_finished") == 3


def test_interrupt_long_command_keeps_session_then_ctrl_c_twice_leaves(failing_repo: Path, write_replies, start):
    """Ctrl-C stops a running command at once; the shell, its directory and variables survive."""
    (failing_repo / "sub").mkdir()
    replies = [
        "```bash\ncd sub && export GREETING=hello\n```",
        "DONE: set up",
        "DONE: set up, really",  # a "done" with no file changed is questioned once
        "```bash\nsleep 60\n```",
        '```bash\necho "$GREETING from $(basename "$PWD")"\n```',
        "DONE: greeted",
        "DONE: greeted, really",
    ]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "full-auto")
    term.expect("mode full-auto")
    term.expect("none of them asks first")
    term.type("set up")
    term.expect("finished: set up")
    term.type("wait a minute")
    term.expect("$ sleep 60")
    term.expect("running")
    interrupted_at = time.monotonic()
    term.ctrl_c()
    term.expect("interrupted")
    term.expect("the session is intact")
    assert time.monotonic() - interrupted_at < 8
    assert not [p for p in processes_in(failing_repo) if "sleep 60" in p]

    term.type("greet")
    term.expect("hello from sub")
    term.expect("finished: greeted")
    term.ctrl_c()
    term.expect("Ctrl-C again (or Ctrl-D) to leave")
    term.ctrl_c()
    assert term.wait_exit() == 0
    assert processes_in(failing_repo) == []


def test_decline_with_reason_and_edit_a_command(failing_repo: Path, write_replies, start, tmp_path: Path):
    replies = ["```bash\nrm calc.py\n```", "```bash\nls\n```", "DONE: nothing removed", "DONE: nothing removed, sure"]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host")
    term.type("tidy up")
    term.expect("rm calc.py")
    term.expect("[a]lways for rm")
    term.key("n")
    term.expect("why not?")
    term.type("keep calc.py")
    term.expect("Run it?")
    term.key("e")
    term.expect("edit ›")
    term.type(" && echo edited-by-user")
    term.expect("edited-by-user")
    term.expect("finished: nothing removed")
    assert (failing_repo / "calc.py").read_text() == ORIGINAL_CALC
    transcript = tmp_path / "transcript.md"
    term.type(f"/save {transcript}")
    term.expect("saved the conversation")
    saved = transcript.read_text()
    assert "The user declined to run that command. They said: keep calc.py" in saved
    assert "The user edited your command before running it; it ran as:\nls && echo edited-by-user" in saved
    term.type("/exit")
    assert term.wait_exit() == 0
    notices = [e["message"] for e in journal_events(failing_repo) if e["type"] == "notice"]
    assert "the user declined: rm calc.py" in notices


def test_auto_edit_runs_edits_and_always_covers_a_kind(failing_repo: Path, write_replies, start):
    replies = [
        "```bash\ncat > notes.txt <<'EOF'\nhello\nEOF\n```",
        "```bash\npython3 -c 'print(40 + 2)'\n```",
        "```bash\npython3 -c 'print(7 * 6 + 1)'\n```",
        "DONE: noted",
    ]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "auto-edit")
    term.type("take notes")
    term.expect("$ cat > notes.txt")
    term.expect("Run it? [y]es  [n]o  [e]dit  [a]lways for python3")
    assert (failing_repo / "notes.txt").read_text() == "hello\n"  # the edit ran without a question
    term.key("a")
    term.expect("42")
    term.expect("43")
    term.expect("finished: noted")
    assert term.text.count("╭─ command") == 1  # "always" covered the second python3 command
    term.type("/exit")
    assert term.wait_exit() == 0


def test_slash_commands_and_unknown_hint(failing_repo: Path, write_replies, start):
    term = start(failing_repo, "repl", "--model", write_replies(["DONE: nothing"]), "--sandbox", "host")
    term.expect("mode suggest")
    term.type("/dif")
    term.expect("unknown command /dif — did you mean /diff? (/help lists them)")
    term.type("/help")
    term.expect("/undo")
    term.expect("put the repository back as it was before the last task")
    term.type("/plan")
    term.expect("no plan yet")
    term.type("/diff")
    term.expect("no task has run yet")
    term.type("/mode bogus")
    term.expect("unknown approval mode 'bogus'")
    term.type("/mode full-auto")
    term.expect("approval mode: full-auto")

    term.type("/sandbox")
    term.expect("sandbox: host · none: commands run on this machine as you")
    term.type("/tokens")
    term.expect("tokens: 0 in · 0 out over 0 steps")
    term.type("/cost")
    term.expect("cost so far: $0")
    term.key("/he")
    term.key("\t")  # Tab completes the command
    term.key("\r")
    term.expect("this list")
    term.type("/quit")
    assert term.wait_exit() == 0


def test_commit_the_session_changes(failing_repo: Path, write_replies, start):
    term = start(
        failing_repo, "repl", "--model", write_replies(FIX_REPLIES), "--sandbox", "host", "--mode", "full-auto"
    )
    term.type("fix the failing test")
    term.expect("finished: ")
    term.type("/commit fix add")
    term.expect("committed 1 file(s)")
    assert git(failing_repo, "log", "-1", "--format=%s").strip() == "fix add"
    assert git(failing_repo, "status", "--porcelain") == ""
    term.type("/commit")
    term.expect("nothing to commit")
    term.key("\x04")
    assert term.wait_exit() == 0


def test_the_checks_on_done_run_in_the_session_too(failing_repo: Path, write_replies, start):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py && git add calc.py && python3 -m pytest -q\n```",
        "DONE: fixed",
        "```bash\ngit commit -qm 'Fix add' && git log --oneline -1\n```",
        "DONE: fixed and committed",
    ]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "full-auto")
    term.type("fix the failing test")
    term.expect("finished: ")
    assert "objection (staged): changes are staged but not committed (calc.py)" in term.text
    assert git(failing_repo, "log", "-1", "--format=%s").strip() == "Fix add"
    term.key("\x04")
    assert term.wait_exit() == 0


def test_a_done_that_stands_while_a_check_objects_is_no_finished_task_in_the_session(
    failing_repo: Path, write_replies, start
):
    replies = [
        "```bash\nsed -i 's/a - b/a + b/' calc.py && git add calc.py && python3 -m pytest -q\n```",
        "DONE: fixed",
        "DONE: fixed, really",
    ]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "full-auto")
    term.type("fix the failing test")
    term.expect("declared finished while changes are staged but not committed")
    term.key("\x04")
    assert term.wait_exit() == 0


def test_follow_up_task_keeps_history_and_clear_starts_over(failing_repo: Path, write_replies, start, tmp_path: Path):
    replies = [
        "```bash\necho first\n```",
        "DONE: one",
        "DONE: one, sure",
        "```bash\necho second\n```",
        "DONE: two",
        "DONE: two, sure",
    ]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "full-auto")
    term.type("task number one")
    term.expect("finished: one")
    term.type("!echo typed-by-hand")
    term.expect("typed-by-hand")
    term.type("task number two")
    term.expect("finished: two")
    saved = tmp_path / "both.md"
    term.type(f"/save {saved}")
    term.expect("saved the conversation")
    text = saved.read_text()
    assert "task number one" in text and "task number two" in text
    assert "The user ran `echo typed-by-hand` (exit 0)" in text
    term.type("/compact")
    term.expect("context compacted:")
    term.expect("messages folded")
    term.type("/clear")
    term.expect("new conversation")
    term.type("/exit")
    assert term.wait_exit() == 0


def test_history_is_kept_across_sessions(failing_repo: Path, write_replies, start):
    model = write_replies(["DONE: nothing"])
    first = start(failing_repo, "repl", "--model", model, "--sandbox", "host")
    first.type("/cost")
    first.expect("cost so far")
    first.type("/exit")
    assert first.wait_exit() == 0
    second = start(failing_repo, "repl", "--model", model, "--sandbox", "host")
    second.expect("mode suggest")
    second.expect("›")
    second.key("\x1b[A\x1b[A")  # Up, Up: the previous session's lines come back
    second.key("\r")
    second.expect("cost so far")
    second.type("/exit")
    assert second.wait_exit() == 0


def test_bare_agentcli_opens_the_session(failing_repo: Path, write_replies, start):
    env = {"AGENTCLI_MODEL": write_replies(["DONE: x"]), "AGENTCLI_SANDBOX": "host"}
    term = start(failing_repo, env=env)
    term.expect("agentcli · model scripted:")
    term.type("/exit")
    assert term.wait_exit() == 0


def test_outside_a_repository_says_so_and_no_git_works(tmp_path: Path, write_replies, start):
    plain = tmp_path / "plain"
    plain.mkdir()
    model = write_replies(["DONE: x"])
    term = start(plain, "repl", "--model", model, "--sandbox", "host")
    term.expect("is not inside a git repository: run `git init` there or pass --no-git")
    assert term.wait_exit() == 2
    term = start(plain, "repl", "--model", model, "--sandbox", "host", "--no-git")
    term.expect("mode suggest")
    term.type("/undo")
    term.expect("/undo needs git; this session runs with --no-git")
    term.type("/exit")
    assert term.wait_exit() == 0


def test_piped_stdin_points_to_solve(failing_repo: Path, write_replies, tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "agentcli", "repl", "--model", write_replies(["DONE: x"]), "--sandbox", "host"],
        cwd=failing_repo,
        input="fix it\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AGENTCLI_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert result.returncode == 2
    assert 'use agentcli solve "TASK"' in result.stderr
    assert "Traceback" not in result.stderr


def test_sigterm_during_a_command_cleans_up(failing_repo: Path, write_replies, start):
    replies = ["```bash\nsleep 60\n```", "DONE: x"]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "host", "--mode", "full-auto")
    term.type("wait")
    term.expect("running")
    os.kill(term.child.pid, signal.SIGTERM)
    term.expect("terminated")
    assert term.wait_exit() == 130
    assert processes_in(failing_repo) == []


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed or cannot run here")
def test_bwrap_defaults_to_auto_edit(failing_repo: Path, write_replies, start):
    replies = ["```bash\nsed -i 's/a - b/a + b/' calc.py\n```", "```bash\npython3 -m pytest -q\n```", "DONE: fixed"]
    term = start(failing_repo, "repl", "--model", write_replies(replies), "--sandbox", "bwrap")
    term.expect("mode auto-edit")
    term.type("fix it")
    term.expect("$ sed -i")
    term.expect("Run it? [y]es  [n]o  [e]dit  [a]lways for python3")
    assert "return a + b" in (failing_repo / "calc.py").read_text()
    term.key("y")
    term.expect("1 passed")
    term.expect("finished: fixed")
    term.key("\x04")
    assert term.wait_exit() == 0
    assert processes_in(failing_repo) == []


class _StallingServer:
    """An OpenAI-compatible server that streams a few words of a reply and then stalls."""

    def __init__(self) -> None:
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for word in ("Let ", "me ", "think ", "about ", "it..."):
                    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}  # fmt: skip
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                time.sleep(60)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.slow
def test_ctrl_c_stops_a_streaming_model_call(failing_repo: Path, start):
    server = _StallingServer()
    try:
        env = {"AGENTCLI_API_BASE": server.url, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        term = start(failing_repo, "repl", "--model", "openai/stalling", "--sandbox", "host", env=env)
        term.expect("mode suggest", timeout=60)
        term.type("think hard")
        term.expect("Let me think about it...", timeout=60)  # tokens show as they arrive
        interrupted_at = time.monotonic()
        term.ctrl_c()
        term.expect("interrupted")
        assert time.monotonic() - interrupted_at < 5
        term.type("!echo still-here")
        term.expect("still-here")
        term.key("\x04")
        assert term.wait_exit() == 0
        assert server.requests == 1
    finally:
        server.close()
