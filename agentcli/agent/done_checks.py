"""The questions asked when the model says it is done, each carrying what follows from its answer
(the policy that switches it, when its objection counts as new, whether a change of code answers it,
whether a retry is worth it), so nothing downstream decides by the check's name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True)
class DoneCheck:
    """A check on DONE: `ask()` gives an objection ("the tests fail: ...") or None. The same objection
    is raised once, so a model that insists can end its run; where a check that judges the result
    (`gist_end`) still objects then, the run is not finished."""

    name: str  # the policy that switches it (or a caller's own name)
    ask: Callable[[], str | None]
    # When an objection is new: by its text, after each command (about the last command), or once a task.
    repeat: Literal["text", "command", "once"] = "text"
    code: bool = False  # the code answers it: after it, the change at a definition shown first is begun
    # Set for a check that judges the result: still standing when DONE was accepted, the attempt is
    # worth redoing and the run is not finished. The objection's first line, cut before this, is its
    # gist (`Outcome.standing_doubt`).
    gist_end: str | None = None

    def key(self, problem: str, commands_run: int) -> str:
        """What makes an objection of this check new."""
        if self.repeat == "command":
            return f"after command {commands_run}"
        return "" if self.repeat == "once" else problem

    def gist(self, problem: str) -> str:
        """The objection cut to what is wrong, for the outcome: "the repository's tests fail"."""
        assert self.gist_end is not None
        return problem.split("\n", 1)[0].split(self.gist_end, 1)[0]

    def asking(self, ask: Callable[[], str | None]) -> DoneCheck:
        return replace(self, ask=ask)
