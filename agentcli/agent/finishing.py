"""Whether the model's DONE is accepted: the loop's own checks (nothing ran, a DONE that copies our
words or reports one step, the last command failed, a change not looked at), then
the session's (`DoneCheck`s), each objection raised once. Where the backend continues replies, the
reply after an objection is begun where the work goes on."""

from __future__ import annotations

import re

from agentcli.agent.checking import check_command
from agentcli.agent.done_checks import DoneCheck
from agentcli.agent.first_look import FIRST_LOOK_TIMEOUT
from agentcli.agent.observation import describe_result
from agentcli.agent.outcome import Stop
from agentcli.agent.parsing import ParsedReply, step_report
from agentcli.agent.run_context import RunContext
from agentcli.agent.verdicts import Objected
from agentcli.policies import BY_NAME
from agentcli.prompts import render

# Words in a row a DONE summary shares with agentcli's own message that make it a copy of that message.
ECHO_WORDS = 6
# Copied DONE lines in a row, with no command between, that end an attempt as stuck.
MAX_ECHOES_IN_A_ROW = 3
# A command an objection offers to send as it stands (`echo debug.log >> .gitignore && git add ...`).
_OFFERED_COMMAND = re.compile(r"```bash\n|`(?:echo|printf|git|chmod|sed|mkdir|mv|cp|bash|python3?) [^`\n]+`")


class Finisher:
    def __init__(self, run: RunContext):
        self.run = run

    def finish(self, parsed: ParsedReply) -> None:
        """Accept the model's "done" (raises Stop), unless something says otherwise (raises Objected).

        Small models often declare a task done after merely looking at it, or right after a failure.
        A run in which no command ran at all is never accepted as finished.
        """
        run, state = self.run, self.run.state
        if not run.commands_ran:
            raise Objected(render("objections/nothing_ran", reminder=run.progress().reminder()), "nothing ran")
        if run.policies.on("echoed-done") and (echoed := self._echoed(parsed.summary)) is not None:
            # "DONE: No file in the repository has changed yet, so the task is not done": no claim.
            # The message it copied, not our answer to an earlier copy of it again and again.
            state.echoes_in_a_row += 1
            if state.echoes_in_a_row >= MAX_ECHOES_IN_A_ROW:
                # Told again and again that its DONE only copies us, it copies that answer: it is stuck.
                raise Stop("failed", f"stuck: {state.echoes_in_a_row} DONE lines in a row copied what agentcli said")
            answer = render("objections/echoed_done", copied="", reminder="")  # how the answer begins
            copied = echoed.removeprefix(answer)
            message = render("objections/echoed_done", copied=copied, reminder=run.progress().reminder())
            # Sampled afresh, the 1.5B copies the objection again: a begun command it cannot copy.
            run.begin_reply(render("begun/command"))
            run.policies.fired("echoed-done")
            raise Objected(message, "echoed-done", command_ran=parsed.finish_after_command)
        if run.policies.on("step-done") and step_report(parsed.summary):
            message = render("objections/step_done", reminder=run.progress().reminder())
            run.policies.fired("step-done")
            raise Objected(message, "step-done", command_ran=parsed.finish_after_command)
        objection = self._objection()
        if objection is not None:
            objected = state.objected
            assert objected is not None
            if objected.code and state.shown_definition is not None:
                # Told what its code still gets wrong, the 1.5B answers DONE again: the definition it
                # was shown first is where the change goes.
                run.begin_change(*state.shown_definition)
            elif _OFFERED_COMMAND.search(objection):
                # Offered the command to send, the 1.5B answers DONE again or copies the objection as
                # prose; in a begun bash block, the command is what it copies.
                run.begin_reply(render("begun/command"))
            # After a command, its observation already stands; the objection follows it.
            raise Objected(objection, objected.name, command_ran=parsed.finish_after_command)
        raise Stop("finished", "the model declared the task finished", parsed.summary)

    def _echoed(self, summary: str) -> str | None:
        """What agentcli told the model that a DONE summary copies (ECHO_WORDS words in a row), or None."""
        words = summary.split()
        windows = {" ".join(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}
        for told in reversed(self.run.state.told):
            flat = " ".join(told.split())
            if any(window in flat for window in windows):
                return told.strip()
        return None

    def _objection(self) -> str | None:
        """The first objection of a check not raised before; of those that stand, the first of a check
        that judges the result is the outcome's `standing_doubt`."""
        run, state = self.run, self.run.state
        checks = [
            # About the last command: raised again after each new command.
            DoneCheck("failed", self._last_command_failed, repeat="command"),
            # Raised once, whatever its text holds (it shows the changed file).
            DoneCheck("unchecked", self._unchecked_change, repeat="once"),
            *run.finish_checks,
        ]
        doubt = ""
        for check in checks:
            if not run.policies.applies(check.name):
                continue
            problem = check.ask()
            if problem is None:
                continue
            if check.name in BY_NAME:  # a caller's own check is no policy
                run.policies.fired(check.name)
            key = (check.name, check.key(problem, len(run.commands_ran)))
            if key not in state.questioned:
                state.questioned.add(key)
                state.objected = check
                # No "reply DONE again if you are sure": small models take it as the instruction.
                return render("objections/not_done", problem=problem, reminder=run.progress().reminder())
            if check.gist_end is not None and not doubt:
                doubt = check.gist(problem)
        run.outcome.standing_doubt = doubt
        return None

    def _last_command_failed(self) -> str | None:
        code = self.run.state.last_exit_code
        return render("objections/last_command_failed", exit_code=code) if code != 0 else None

    def _unchecked_change(self) -> str | None:
        """The objection when the last command changed files unseen, with the changed file shown.

        Told to check, a small model often changes the file again instead; shown the result, it can
        see whether the change is right.
        """
        run = self.run
        if not run.state.unchecked:
            return None
        look = check_command(run.state.last_command)
        if look is None:
            return render("objections/unchecked_change", look=None)
        with run.tree_kept():
            obs = run.repo.run_at_root(look, FIRST_LOOK_TIMEOUT)
        return render("objections/unchecked_change", look=look, result=describe_result(obs))
