"""Where the model is in its own plan, and what the loop says of it.

A step counts as done at one successful command (a step that only looks, such as running the tests,
counts even when its command fails). Small models told only "continue" start their plan over, or
declare it done after its first step: the step due is named after each observation and in reminders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentcli.prompts import render

# A plan step that looks rather than changes: its command counts as done even when it fails.
_OBSERVING_STEP = re.compile(
    r"^\W*(?:run|re-?run|reproduce|execute|test|try|check|verify|confirm|inspect|read|look|view|list|find|"
    r"search|identify|examine|review|show|print|cat|see|understand)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PlanProgress:
    plan: Sequence[str]
    done: int  # steps done since the plan was last set

    def due(self) -> tuple[int, str] | None:
        """The step due now (1-based) and its text; None past the plan's end."""
        return (self.done + 1, self.plan[self.done]) if self.done < len(self.plan) else None

    def observing_due(self) -> bool:
        """Whether the step due is one of looking: done once its command ran, even failing."""
        due = self.due()
        return due is not None and _OBSERVING_STEP.search(due[1]) is not None

    def reminder(self) -> str:
        """The plan and the step due, for a reply that did nothing (or the bare request without a plan)."""
        plan = list(self.plan)
        number, text = self.due() or (len(plan), plan[-1] if plan else "")
        return render("nudges/plan_reminder", plan=plan, number=number, due=text)

    def hint(self) -> str:
        """What follows each observation: only the step due (a small model copies the hint's words into
        its reply, and a step is worth copying); "" past the plan's end."""
        due = self.due()
        return "" if due is None else render("nudges/next_step", number=due[0], due=due[1])
