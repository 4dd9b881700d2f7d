"""The agent's heuristics by name: what each is for, whether it reads the task's wording, which
profiles turn it on, and the switches (`--policy NAME=off`, `policies = [...]`) that override them.

Every check, guard, first look and begun reply the loop or the session applies asks `Policies.on(name)`
first, so any one can be switched off and its effect measured (`benchmarks/ablation.py`), and says
`Policies.fired(name)` when it changes what the run does, so the journal shows where each one acted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from agentcli.errors import UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class Policy:
    """One heuristic: its name, why it exists (one line, for the docs and `agentcli policies`), and
    whether it reads the task's wording (such policies are fitted to phrasings and measured apart)."""

    name: str
    why: str
    reads_task: bool = False


CATALOG: tuple[Policy, ...] = (
    # Checks on "done" (an objection sends the model back to work; each is raised once).
    Policy("failed", "DONE right after a failing command is objected to."),
    Policy("unchecked", "DONE right after a command that changed files unseen: the change is shown first."),
    Policy("unchanged", "DONE when the task has changed no file and made no commit."),
    Policy("syntax", "DONE while a Python file the task changed no longer parses."),
    Policy("data-syntax", "DONE while a JSON or TOML file the task created or changed does not parse."),
    Policy("shell-syntax", "DONE while a shell script the task created or broke does not parse (`bash -n`)."),
    Policy("empty", "DONE while a file the task created is empty."),
    Policy("tests", "DONE while the repository's tests fail."),
    Policy(
        "failing-before",
        "Tests that failed before a task that speaks of no tests or failures are not held against its DONE.",
        True,
    ),
    Policy("examples", "DONE while the docstring examples of a changed Python file fail."),
    Policy("staged", "DONE with changes staged and not committed."),
    Policy("echoed-done", "A DONE that only copies agentcli's words is no claim; three in a row end the attempt."),
    Policy("step-done", "A DONE that reports one step of the plan is told the task goes on."),
    # Before the first reply.
    Policy("named-code", "The function or short file the task names is shown before the first reply.", True),
    # Around the model's commands.
    Policy("lossy-overwrite", "A `>` that lost a file's content is undone."),
    Policy("broken-append", "A `>>` that leaves a Python file unparsable is undone."),
    Policy("server-stop", "A server run in the foreground is stopped after a few seconds, as no failure."),
    Policy("offline-install", "After an install found no network, installs are refused."),
    Policy("failure-advice", "The exact way past a script that may not run, or echo quotes that do not close."),
    Policy("missing-import", "A standard-library module a changed Python file uses and never imports is imported."),
    Policy("literal-heredoc", "A here-document that writes code keeps its `$` and backquotes: its end word is quoted."),
    Policy("nothing-to-commit", "git's 'nothing to commit' is no failure."),
    Policy("repeat-refusal", "The same failing command sent again is not run; a second time the run is stuck."),
    Policy("failure-focus", "A failure's traceback is shown at the repository's code, and the fix begun there."),
    Policy("repeat-output", "Output already shown is not shown again in full."),
    Policy("changes-shown", "The diff of each file a command changed is shown after its output."),
    Policy("next-step", "The step of the model's plan that is due is named after each command's output."),
    Policy("echo-as-block", "Code echoed into a file, or sent with no path, is taken as a file write."),
    Policy("asked-file", "Python code echoed to no file goes to the one Python file the task asks for.", True),
    Policy("begun-replies", "The next reply is begun (the change at a shown definition, a bash block) after a hint."),
    Policy("first-change", "Shown code before its first reply, the model's first reply is begun as a change to it."),
    Policy("echoed-reply", "A reply that only echoes agentcli's own lines is sampled again, warmer."),
    Policy("select", "At a step that changes code, the tests choose between candidate replies (--candidates K)."),
    Policy("reply-grammar", "A model that decodes under a grammar writes prose, then one block or DONE, nothing else."),
    Policy("action-due", "Under the reply grammar, a reply stopped in its prose goes on from there to its action."),
    Policy("note-copies", "Under the reply grammar no line of prose starts with `[`, as agentcli's own lines do."),
    # The run as a whole.
    Policy("stuck", "Commands repeated with the same result get a nudge, then end the attempt as stuck."),
    Policy("retries", "An attempt that went wrong is taken back and the task tried afresh, sampling."),
)
BY_NAME = {policy.name: policy for policy in CATALOG}
# Policies deleted because they added nothing where measured (docs/measurements.md): switching one off is
# accepted and changes nothing, so configurations and scripts written for them keep working.
RETIRED = frozenset(
    {
        "first-looks", "looks", "unrun", "task-doubt-retries", "outputs", "asked-script", "keep-named",
        "named-deletion", "at-top", "version-history", "env-variable", "data-script", "substitution", "names",
        "raises", "code", "commit", "printed-output", "expectation", "plan", "described-edits",
        "duplicate-setting", "missing-folders", "review", "agreement", "resample",
    }
)  # fmt: skip

# Profiles: which policies a run starts from. `general` keeps what never reads the task's wording.
PROFILES: dict[str, frozenset[str]] = {
    "small-local": frozenset(BY_NAME),
    "hosted": frozenset(BY_NAME),
    "general": frozenset(p.name for p in CATALOG if not p.reads_task),
    "none": frozenset(),
}
DEFAULT_PROFILE = "small-local"


class Policies:
    """The policies a run applies."""

    def __init__(self, enabled: frozenset[str] | set[str]):
        unknown = set(enabled) - set(BY_NAME)
        if unknown:
            raise ValueError(f"unknown policies: {', '.join(sorted(unknown))}")
        self.enabled = frozenset(enabled)
        self.on_fired: Callable[[str], None] = lambda name: None  # told each time a policy fires

    def on(self, name: str) -> bool:
        if name not in BY_NAME:
            raise KeyError(name)  # a misspelt name in agentcli's own code
        return name in self.enabled

    def fired(self, name: str) -> None:
        """Policy `name` changed what the run did (the journal's `policy_fired`)."""
        if name not in BY_NAME:
            raise KeyError(name)
        self.on_fired(name)

    def fired_if(self, name: str, effect: T) -> T:
        """`effect`, what policy `name` would do (a note, a refusal, a rewrite; None or empty: nothing),
        recorded as its firing where it is something."""
        if effect:
            self.fired(name)
        return effect

    def applies(self, check: str) -> bool:
        """Whether a check goes ahead: one of the catalogue while it is on; any other (a caller's own) always."""
        return check not in BY_NAME or check in self.enabled

    @classmethod
    def every(cls) -> Policies:
        return cls(frozenset(BY_NAME))

    @classmethod
    def chosen(cls, profile: str, switches: list[str]) -> Policies:
        """The profile's policies with `switches` ("NAME=off", "NAME=on") applied, in order; bad input
        is a one-line usage error."""
        if profile not in PROFILES:
            raise UsageError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
        enabled = set(PROFILES[profile])
        for switch in switches:
            name, _, state = switch.partition("=")
            name, state = name.strip(), state.strip().lower()
            if state not in ("on", "off"):
                raise UsageError(f"policy switch must be NAME=on or NAME=off, got {switch!r}")
            if name in RETIRED and state == "off":
                continue
            if name in RETIRED:
                raise UsageError(f"policy {name!r} was removed: it added nothing where measured (docs/measurements.md)")
            if name not in BY_NAME:
                raise UsageError(f"unknown policy {name!r} (see `agentcli policies`)")
            (enabled.add if state == "on" else enabled.discard)(name)
        return cls(frozenset(enabled))


def catalogue_markdown() -> str:
    """docs/policies.md: the catalogue as a table, generated from `CATALOG` (a test keeps them equal)."""
    lines = [
        "# Policies",
        "",
        "<!-- Generated by `agentcli policies --markdown`; edit agentcli/policies/__init__.py instead. -->",
        "",
        "Every heuristic the agent applies is a named policy. `--policy NAME=off` (repeatable; on `solve` and",
        '`eval`), `policies = ["NAME=off"]` in a config file or `AGENTCLI_POLICIES=NAME=off,...` switches one;',
        '`--profile` (or `profile = "..."`) chooses where a run starts from (a resumed run keeps its own):',
        "",
        *(
            f"- `{name}`: {len(names)} policies" + (" (default)" if name == DEFAULT_PROFILE else "")
            for name, names in PROFILES.items()
        ),
        "",
        "`hosted` is the same set as `small-local` until measurements on hosted models separate them.",
        "`general` keeps only the policies that never read the task's wording. A policy marked *task* reads",
        "it: such policies are fitted to phrasings, and `benchmarks/ablation.py` measures what each adds on",
        "tasks nobody tuned them for. Each time a policy changes what a run does, the journal records a",
        "`policy_fired` event with its name.",
        "",
        "Policies removed because they added nothing where measured ([measurements](measurements.md)) may still",
        f"be switched off, to no effect: {', '.join(f'`{name}`' for name in sorted(RETIRED))}.",
        "",
        "| policy | reads the task | why |",
        "|---|---|---|",
        *(f"| `{p.name}` | {'yes' if p.reads_task else ''} | {p.why} |" for p in CATALOG),
        "",
    ]
    return "\n".join(lines)
