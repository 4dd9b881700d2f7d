"""The model's progress through its own plan, and what the loop says of it (agent.plan_progress)."""

from agentcli.agent.plan_progress import PlanProgress
from agentcli.agent.verdicts import Malformed, Objected, Refused

PLAN = ["Run the tests", "Fix the parser", "Run the tests again"]


def test_the_step_due_follows_the_steps_done_and_none_is_due_past_the_end():
    assert PlanProgress(PLAN, 0).due() == (1, "Run the tests")
    assert PlanProgress(PLAN, 2).due() == (3, "Run the tests again")
    assert PlanProgress(PLAN, 3).due() is None
    assert PlanProgress([], 0).due() is None


def test_a_step_that_only_looks_is_told_apart_from_one_that_changes():
    assert PlanProgress(PLAN, 0).observing_due()
    assert not PlanProgress(PLAN, 1).observing_due()
    assert not PlanProgress(PLAN, 3).observing_due()


def test_the_reminder_quotes_the_plan_and_names_the_step_due():
    reminder = PlanProgress(PLAN, 1).reminder()
    assert reminder.startswith("Your plan: 1. Run the tests. 2. Fix the parser. 3. Run the tests again.")
    assert "Continue with step 2 (Fix the parser)" in reminder
    # Past the end the last step is named; with no plan, only the request for a command.
    assert "step 3 (Run the tests again)" in PlanProgress(PLAN, 3).reminder()
    assert PlanProgress([], 0).reminder() == "Continue with the next command."


def test_the_hint_and_the_objection_name_only_the_step_due():
    assert PlanProgress(PLAN, 1).hint() == "step 2 of your plan: Fix the parser"
    assert PlanProgress(PLAN, 3).hint() == ""


def test_a_verdict_labels_itself_by_its_kind_and_what_it_is_about():
    assert Refused("Not run: ...").label == "refused"
    assert Refused("...", "repeat-refusal").label == "refused (repeat-refusal)"
    assert Objected("Not done yet: ...", "tests", command_ran=True).label == "objection (tests)"
    assert Malformed("No command found.").label == ""
    assert Objected("x", "tests", command_ran=True).command_ran and not Refused("x").command_ran


def test_a_check_on_done_says_when_its_objection_is_new():
    from agentcli.agent.done_checks import DoneCheck

    by_text = DoneCheck("tests", lambda: "the tests fail")
    assert by_text.key("the tests fail", 3) != by_text.key("the tests fail: 2 now", 3)
    assert by_text.key("x", 3) == by_text.key("x", 4)
    per_command = DoneCheck("failed", lambda: None, repeat="command")
    assert per_command.key("x", 3) != per_command.key("x", 4)
    assert DoneCheck("unchecked", lambda: None, repeat="once").key("a", 1) == DoneCheck(
        "unchecked", lambda: None, repeat="once"
    ).key("b", 2)
    staged = DoneCheck("staged", lambda: None, gist_end=":")
    asked = staged.asking(lambda: "left")
    assert asked.name == "staged" and asked.ask() == "left" and asked.gist_end == ":"
