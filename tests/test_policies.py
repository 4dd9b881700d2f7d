"""Policies: the catalogue, profiles and switches, and a switched-off policy really not applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.policies import BY_NAME, CATALOG, PROFILES, Policies, catalogue_markdown
from agentcli.ui.console import gist
from tests.conftest import FIX_REPLIES
from tests.test_solve import agentcli, objections_in, solve_json

DOCS = Path(__file__).resolve().parents[1] / "docs" / "policies.md"


def test_docs_are_the_catalogue():
    assert DOCS.read_text() == catalogue_markdown(), "regenerate: agentcli policies --markdown > docs/policies.md"


def test_every_policy_says_why_in_one_line():
    assert len(BY_NAME) == len(CATALOG)
    for policy in CATALOG:
        assert policy.why and "\n" not in policy.why and len(policy.why) < 120, policy.name


def test_general_profile_keeps_only_what_never_reads_the_task():
    general = Policies.chosen("general", [])
    assert all(general.on(p.name) != p.reads_task for p in CATALOG)
    assert PROFILES["none"] == frozenset()


def test_switches_apply_in_order_over_the_profile():
    chosen = Policies.chosen("general", ["named-code=on", "tests=off", "named-code=off", "retries=off"])
    assert not chosen.on("named-code") and not chosen.on("tests") and not chosen.on("retries")
    assert chosen.on("syntax")
    with pytest.raises(KeyError):
        chosen.on("no-such-policy")


@pytest.mark.parametrize(
    ("profile", "switches", "error"),
    [
        ("tiny", [], "profile must be one of"),
        ("small-local", ["tests"], "NAME=on or NAME=off"),
        ("small-local", ["nonsense=off"], "unknown policy 'nonsense'"),
    ],
)
def test_bad_choices_are_one_line_errors(profile, switches, error):
    with pytest.raises(UsageError, match=error):
        Policies.chosen(profile, switches)


def test_solve_refuses_an_unknown_policy_in_one_line(failing_repo, write_replies):
    result = agentcli(
        "solve", "Fix it", "--model", write_replies(FIX_REPLIES), "--policy", "tets=off", cwd=failing_repo
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["agentcli: unknown policy 'tets' (see `agentcli policies`)"]


def test_a_policy_switched_off_is_not_applied(failing_repo, write_replies):
    """DONE while the tests fail: objected to with `tests` on; accepted with `tests=off`."""
    replies = ["```bash\necho looking\n```", "DONE: nothing to do.", "DONE: still nothing."]
    _, events = solve_json(failing_repo, "Fix the failing test.", write_replies(replies))
    assert any(e["type"] == "format_error" and e["verdict"] == "objection (tests)" for e in events), events
    off = agentcli(
        "solve", "Fix the failing test.", "--model", write_replies(replies), "--sandbox", "host", "--json",
        "--policy", "tests=off", "--policy", "unchanged=off", "--policy", "retries=off",
        cwd=failing_repo,
    )  # fmt: skip
    assert off.returncode == 0, off.stderr
    assert '"status": "finished"' in off.stdout.splitlines()[-1]
    assert not objections_in([json.loads(line) for line in off.stdout.splitlines()])


def test_the_user_sees_a_verdict_in_one_short_line():
    told = (
        "Not done yet: Your last command changed files but showed nothing of the result. Here is `cat -n stats.py`:\n"
        "     1\tdef mean(xs):\n     2\t    return sum(xs) / len(xs)\n"
    )
    assert gist(told) == "Your last command changed files but showed nothing of the result."
    assert len(gist("Not run: " + "x" * 500)) == 100


def test_every_check_on_done_is_a_policy_of_the_catalogue():
    from agentcli.session.done import repository_checks

    checks = repository_checks(lambda: pytest.fail("no check is asked here"))
    agent_checks = {"failed", "unchecked"}
    session_checks = {"tests", "examples"}
    for switch in agent_checks | session_checks | {check.name for check in checks}:
        assert switch in BY_NAME, switch
        assert not BY_NAME[switch].reads_task, f"{switch}: a doubt of it would throw right work away on a retry"


def test_a_retired_policy_switched_off_changes_nothing_and_on_is_refused():
    assert Policies.chosen("small-local", ["first-looks=off", "looks=off"]).enabled == PROFILES["small-local"]
    with pytest.raises(UsageError, match="policy 'unrun' was removed"):
        Policies.chosen("small-local", ["unrun=on"])
