"""The persistent shell on every local backend: state, timeouts, big outputs, bad commands."""

from __future__ import annotations

import resource
import time

import pytest

from agentcli.sandbox.channel import read_head_tail


def test_state_persists_between_commands(sandbox):
    sandbox.run("mkdir -p sub && cd sub && export GREETING=hello && COUNT=3 && shout() { echo LOUD; }")
    obs = sandbox.run("pwd; echo $GREETING $COUNT; shout")
    assert obs.exit_code == 0
    assert obs.output.splitlines() == [f"{sandbox.workdir}/sub", "hello 3", "LOUD"]
    sandbox.run("unset GREETING; cd ..")
    assert sandbox.run('echo "[$GREETING]"; pwd').output.splitlines() == ["[]", sandbox.workdir]


def test_venv_activation_persists(sandbox):
    created = sandbox.run("python3 -m venv --without-pip .venv && . .venv/bin/activate", timeout=60)
    assert created.exit_code == 0, created.output
    obs = sandbox.run("command -v python; echo $VIRTUAL_ENV")
    assert obs.output.splitlines() == [f"{sandbox.workdir}/.venv/bin/python", f"{sandbox.workdir}/.venv"]


def test_exit_code_stderr_and_duration(sandbox):
    obs = sandbox.run("echo out; echo err >&2; exit 7")
    assert obs.exit_code == 7
    assert obs.output == "out\nerr\n"
    assert 0 <= obs.duration < 5
    assert not obs.ok


def test_timeout_kills_command_group_and_keeps_session(sandbox):
    sandbox.run("export KEEP=yes")
    started = time.monotonic()
    obs = sandbox.run("sleep 31.123 & sleep 31.123; echo never", timeout=1)
    assert obs.timed_out and obs.exit_code != 0
    assert "never" not in obs.output
    assert time.monotonic() - started < 10
    after = sandbox.run("echo $KEEP; pgrep -f 'sleep 31.123' | wc -l")
    assert after.output.split() == ["yes", "0"]


def test_command_ignoring_sigterm_is_killed(sandbox):
    obs = sandbox.run("trap '' TERM; sleep 30", timeout=1)
    assert obs.timed_out
    assert sandbox.run("echo alive").output == "alive\n"


def test_syntax_error_is_reported_and_not_run(sandbox):
    obs = sandbox.run('touch created.txt; echo "unbalanced')
    assert obs.syntax_error and obs.exit_code == 2
    assert "unexpected EOF" in obs.output
    assert sandbox.run("ls created.txt").exit_code != 0


def test_a_multi_line_command_that_turns_extglob_on_before_using_it_runs(sandbox):
    sandbox.run("touch keep.txt drop.log")
    obs = sandbox.run("shopt -s extglob\nls !(drop.log)")
    assert obs.exit_code == 0 and not obs.syntax_error, obs.output
    assert obs.output.split() == ["keep.txt"]


def test_a_multi_line_command_using_extglob_it_never_turns_on_does_not_run_at_all(sandbox):
    obs = sandbox.run("touch ran.txt\nls !(ran.txt)")
    assert obs.syntax_error and obs.exit_code == 2
    assert sandbox.run("ls ran.txt").exit_code != 0


def test_background_process_does_not_block(sandbox):
    started = time.monotonic()
    obs = sandbox.run("sleep 60 & echo started")
    assert obs.output == "started\n" and time.monotonic() - started < 5
    assert sandbox.run("echo next").output == "next\n"


def test_interactive_command_gets_no_stdin(sandbox):
    obs = sandbox.run('read -r line; echo "got:$line"', timeout=5)
    assert obs.output == "got:\n" and not obs.timed_out


def test_huge_output_keeps_memory_flat(sandbox):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    obs = sandbox.run("yes 0123456789abcdef | head -c 200000000", timeout=60)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert obs.exit_code == 0
    assert obs.total_bytes == 200_000_000
    assert obs.truncated and len(obs.output) < 10_000
    assert "bytes omitted" in obs.output
    assert (after - before) < 50_000  # KiB: far below the 200 MB printed
    full = sandbox.read_file(obs.output_path)[:40]
    assert full.startswith("0123456789abcdef")


def test_read_and_write_file(sandbox):
    sandbox.write_file("dir/note.txt", "hello\n")
    assert sandbox.run("cat dir/note.txt").output == "hello\n"
    sandbox.run("echo changed > dir/note.txt")
    assert sandbox.read_file(f"{sandbox.workdir}/dir/note.txt") == "changed\n"


def test_a_file_that_is_not_there_is_file_not_found_in_every_sandbox(sandbox):
    # deep-merge-json: a path a command quoted (`/var/log/tracker.log`) read in the Docker sandbox
    # raised a bare OSError, which ended the run.
    for path in ("/var/log/not-there.log", "not-there.txt"):
        with pytest.raises(FileNotFoundError):
            sandbox.read_file(path)


def test_shell_killed_from_inside_is_restarted(sandbox):
    obs = sandbox.run("kill -9 $$; sleep 1", timeout=5)
    assert obs.killed_reason and "restarted" in obs.killed_reason
    assert sandbox.run("echo back").output == "back\n"


def test_head_tail_cut(tmp_path):
    path = tmp_path / "out"
    path.write_text("".join(f"line {i}\n" for i in range(10000)))
    with open(path, "rb") as f:
        text, total, truncated = read_head_tail(f, 1000)
    assert truncated and total == path.stat().st_size
    assert text.startswith("line 0\n") and text.rstrip().endswith("line 9999")


def test_carriage_return_progress_is_collapsed(sandbox):
    obs = sandbox.run("printf 'progress 10%%\\rprogress 100%%\\n'; printf 'crlf\\r\\n'")
    assert obs.output == "progress 100%\ncrlf\n"
