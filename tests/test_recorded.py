"""The recorded sandbox: a command run beside the model's own is a `side_command` event, its two ends
kept; the model's commands are left to their callers, nested blocks included."""

from __future__ import annotations

from pathlib import Path

from agentcli.agent.recorded import OUTPUT_KEPT, RecordedSandbox, journaled_as_command
from agentcli.events import Event, SideCommand
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, committed_repo


def test_side_commands_keep_both_ends_and_the_models_are_left_to_their_callers(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"a.txt": "a\n"})
    seen: list[Event] = []
    with HostSandbox(root, channel_for(root)) as box:
        recorded = RecordedSandbox(box, seen.append)
        recorded.run("seq 1 3000; echo the-summary-line", timeout=30)
        with journaled_as_command(recorded):
            recorded.run("echo the model's", timeout=30)
            with journaled_as_command(recorded):
                recorded.run("echo nested", timeout=30)
            recorded.run("echo still the model's", timeout=30)  # the inner block ended, not the outer
        recorded.run("echo a check", timeout=30)
    side = [e for e in seen if isinstance(e, SideCommand)]
    assert [e.command for e in side] == ["seq 1 3000; echo the-summary-line", "echo a check"]
    first = side[0].output
    assert first.startswith("1\n2\n") and first.rstrip().endswith("the-summary-line") and "[...]" in first
    assert len(first) <= OUTPUT_KEPT + len("\n[...]\n")
