"""The human view of a run: the plan, each command with its output folded, a closing summary."""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from agentcli.agent.parsing import find_blocks
from agentcli.events import (
    CandidateScored,
    CommandFinished,
    CommandStarted,
    ContextCompacted,
    Event,
    FormatError,
    ModelReplied,
    ModelRetry,
    ModelStarted,
    Notice,
    Nudge,
    PlanUpdated,
    ReplyAskedAgain,
    RunFinished,
    RunStarted,
    declared_done,
)

HEAD_LINES = 12
TAIL_LINES = 6


def fold(output: str, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> tuple[str, int]:
    """The first and last lines of `output`, and how many lines were hidden between them."""
    lines = output.rstrip("\n").splitlines()
    if len(lines) <= head + tail + 1:
        return "\n".join(lines), 0
    return "\n".join([*lines[:head], *lines[-tail:]]), len(lines) - head - tail


def prose_of(reply: str) -> str:
    """A reply without its code blocks and plan: the model's reasoning, for display."""
    text = reply
    for block in find_blocks(reply):
        text = text.replace(block.body, "")
    text = re.sub(r"^\s*(`{3,}|~{3,}).*$", "", text, flags=re.MULTILINE)
    text = re.sub(r"^\s*(?:step\s*)?\d{1,2}[.):]\s+.*$", "", text, flags=re.MULTILINE | re.IGNORECASE)
    text = re.sub(r"^\s*\**plan\**:?\s*$", "", text, flags=re.MULTILINE | re.IGNORECASE)
    return re.sub(r"\n{2,}", "\n", text).strip()


class ConsoleRenderer:
    """Renders events with rich. A spinner shows while the model works, on terminals only."""

    def __init__(self, console: Console | None = None, *, show_thoughts: bool = True):
        self.console = console or Console(highlight=False)
        self.show_thoughts = show_thoughts
        self._status = None

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _on_run_started(self, e: RunStarted) -> None:
        self.console.print(
            f"[bold]agentcli[/] · model [cyan]{escape(e.model)}[/] · sandbox [cyan]{e.sandbox}[/] · "
            f"session {e.session_id}"
        )

    def _on_notice(self, e: Notice) -> None:
        style = "yellow" if e.level == "warning" else "dim"
        self.console.print(f"[{style}]{escape(e.message)}[/]")

    def _on_model_started(self, e: ModelStarted) -> None:
        if self.console.is_terminal:
            self._status = self.console.status(f"thinking (step {e.step})…", spinner="dots")
            self._status.start()

    def _on_model_retry(self, e: ModelRetry) -> None:
        self.console.print(f"[yellow]model call failed ({escape(e.error)}); retry {e.attempt} in {e.delay:.1f}s[/]")

    def _on_model_replied(self, e: ModelReplied) -> None:
        self._stop_spinner()
        if self.show_thoughts and (thought := prose_of(e.text)):
            self.console.print(Text(thought, style="italic dim"))

    def _on_reply_asked_again(self, e: ReplyAskedAgain) -> None:
        self._stop_spinner()
        self.console.print(f"[dim]the model {escape(e.why)}: asking again[/]")

    def _on_plan_updated(self, e: PlanUpdated) -> None:
        body = "\n".join(f"{i}. {escape(step)}" for i, step in enumerate(e.steps, 1))
        self.console.print(Panel(body, title="plan", title_align="left", border_style="blue", expand=False))

    def _on_command_started(self, e: CommandStarted) -> None:
        first, *rest = e.command.splitlines() or [""]
        more = f" [dim](+{len(rest)} lines)[/]" if rest else ""
        self.console.print(f"[bold green]$[/] [bold]{escape(first)}[/]{more}")
        for note in e.notes:
            self.console.print(f"  [yellow]{escape(note)}[/]")

    def _on_command_finished(self, e: CommandFinished) -> None:
        shown, hidden = fold(e.output)
        if shown.strip():
            self.console.print(Text(_indent(shown), style="dim"), soft_wrap=True)
        if hidden:
            where = f"; full output: {e.output_path}" if e.output_path else ""
            self.console.print(f"  [dim]… {hidden} lines hidden{escape(where)}[/]")
        if e.syntax_error:
            status = "[red]syntax error, not run[/]"
        elif e.timed_out:
            status = f"[red]timed out after {e.duration:.0f}s[/]"
        elif e.exit_code == 0:
            status = f"[green]exit 0[/] [dim]{e.duration:.2f}s[/]"
        else:
            status = f"[red]exit {e.exit_code}[/] [dim]{e.duration:.2f}s[/]"
        self.console.print(f"  {status}")

    def _on_format_error(self, e: FormatError) -> None:
        self._stop_spinner()
        # The person at the terminal gets the gist; the model's whole paragraph is in --json and the journal.
        if e.verdict:
            self.console.print(f"[yellow]{escape(e.verdict)}: {escape(gist(e.message))}[/]")
        else:
            self.console.print(f"[yellow]no usable command ({e.count}): {escape(gist(e.message))}[/]")

    def _on_candidate_scored(self, e: CandidateScored) -> None:
        self._stop_spinner()
        if e.repeated:
            self.console.print(f"[dim]a sample repeated candidate {e.index + 1}: drawn again[/]")
            return
        verdict = "the tests could not say" if e.failed is None else f"{e.failed} failing, {e.passed} passing"
        kept = " [green](kept)[/]" if e.chosen else ""
        self.console.print(f"[dim]candidate {e.index + 1}: {verdict}[/]{kept}")

    def _on_nudge(self, e: Nudge) -> None:
        self.console.print(f"[yellow]looks stuck: {escape(e.reason)}; told the model[/]")

    def _on_context_compacted(self, e: ContextCompacted) -> None:
        how = "digest" if e.fallback else "summary"
        self.console.print(
            f"[dim]context compacted: {e.folded_messages} messages folded into a {how} "
            f"({e.tokens_before} → {e.tokens_after} tokens)[/]"
        )

    def _on_result(self, e: RunFinished) -> None:
        self._stop_spinner()
        colour = "green" if e.status == "finished" else "red"
        lines = [f"[bold {colour}]{e.status}[/]: {escape(e.reason)}"]
        if e.summary:
            lines.append(escape(e.summary))
        if e.diffstat:
            lines.append("")
            lines.append(escape(e.diffstat))
        elif declared_done(e.status, e.standing_doubt):
            lines.append("[dim]no files changed[/]")
        cost = f" · ${e.cost:.4f}" if e.cost else ""
        lines.append("")
        lines.append(
            f"[dim]{e.steps} steps · {e.tokens_in:,} tokens in · {e.tokens_out:,} out · {e.wall_time:.1f}s{cost}[/]"
        )
        if e.branch:
            lines.append(f"[dim]branch {escape(e.branch)} · commit {e.commit}[/]")
        if e.files_changed:
            lines.append("[dim]undo with: agentcli undo[/]")
        self.console.print(Panel("\n".join(lines), border_style=colour, expand=False))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


GIST_CHARS = 100


def gist(message: str) -> str:
    """The first sentence of what the model was told, on one line, cut to GIST_CHARS."""
    line = message.removeprefix("Not done yet: ").removeprefix("Not run: ").strip().split("\n", 1)[0]
    first = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0].rstrip(":").strip()
    return first if len(first) <= GIST_CHARS else first[: GIST_CHARS - 3].rstrip() + "..."
