"""`agentcli show` in the terminal: a journaled run, step by step, with rich.

Text from the journal is untrusted (the model's replies, the commands' output): it is passed as `Text`, never
as markup, and cleaned of terminal escape sequences first.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from agentcli.events import declared_done
from agentcli.ui.console import prose_of
from agentcli.ui.runs import Command, Run, Step, clean_text, cost, describe, duration, fold, tokens, when

REPLY_LINES = 4
STATUS_STYLE = {"finished": "green", "unfinished": "yellow"}


def _text(value: object, style: str = "") -> Text:
    return Text(clean_text(str(value)), style=style)


def _line(*parts: tuple[object, str]) -> Text:
    line = Text()
    for value, style in parts:
        line.append(clean_text(str(value)), style=style)
    return line


def render_run(run: Run, console: Console | None = None, *, head: int = 8, tail: int = 4, full: bool = False) -> None:
    console = console or Console(highlight=False)
    style = STATUS_STYLE.get(run.status, "red")
    console.print(_text(run.task.strip() or "(no task recorded)", "bold"))
    console.print(
        _line(
            ("session ", "dim"),
            (run.id, ""),
            (" · ", "dim"),
            (run.status, f"bold {style}"),
            (f" · {run.steps} steps · {tokens(run.tokens_in + run.tokens_out)} tokens", ""),
            (f" · {cost(run.cost, precise=True)}" if run.cost else "", ""),
            (f" · {duration(run.wall_time)}", ""),
        )
    )
    console.print(
        _line(
            ("model ", "dim"),
            (run.model, "cyan"),
            (" · sandbox ", "dim"),
            (run.sandbox, "cyan"),
            (" · started ", "dim"),
            (when(run.start_time), ""),
        )
    )
    if run.workdir:
        console.print(_line(("workdir ", "dim"), (run.workdir, "")))
    plans = run.plans
    if plans:
        body = Text("\n").join(_text(f"{i}. {step}") for i, step in enumerate(plans[-1], 1))
        title = "plan" + (f" (revised {len(plans) - 1}×)" if len(plans) > 1 else "")
        console.print(Panel(body, title=title, title_align="left", border_style="blue", expand=False))

    before, steps = run.timeline
    for event in before:
        _event(console, event, first_plan=plans[0] if plans else None)
    for step in steps:
        _step(console, step, head=head, tail=tail, full=full, first_plan=plans[0] if plans else None)

    console.print()
    if run.result is None:
        last = run.events[-1].get("type", "?") if run.events else "nothing"
        console.print(
            Panel(
                _text(
                    f"unfinished: the journal has no result (its last event: {last}). "
                    "The run was killed, or is still going."
                ),
                border_style="yellow",
                expand=False,
            )
        )
        return
    console.print(_result(run))


def _step(console: Console, step: Step, *, head: int, tail: int, full: bool, first_plan) -> None:
    label = f"step {step.number}" if step.number else "before the first reply"
    if step.reply is not None:
        reply = step.reply
        label += f" · {tokens(int(reply.get('completion_tokens') or 0))} tokens out"
        label += f" · {duration(reply.get('duration'))}" if isinstance(reply.get("duration"), (int, float)) else ""
    console.print(Rule(_text(label, "bold"), align="left", style="dim"))
    if step.reply is not None:
        thought = prose_of(str(step.reply.get("text", "")))
        if thought:
            lines = thought.splitlines()
            shown = "\n".join(lines[:REPLY_LINES]) + (
                f"\n… ({len(lines) - REPLY_LINES} more lines)" if len(lines) > REPLY_LINES else ""
            )
            console.print(_text(shown, "italic"))
    for item in step.items:
        if isinstance(item, Command):
            _command(console, item, head=head, tail=tail, full=full)
        else:
            _event(console, item, first_plan=first_plan)


def _command(console: Console, command: Command, *, head: int, tail: int, full: bool) -> None:
    lines = command.text.splitlines() or [""]
    console.print(_line(("$ ", "bold green"), (lines[0], "bold")))
    shown_lines = lines[1:] if full else lines[1 : 1 + head]
    for line in shown_lines:
        console.print(_line(("  ", ""), (line, "bold")))
    if len(lines) - 1 > len(shown_lines):
        console.print(_text(f"  … {len(lines) - 1 - len(shown_lines)} more lines of the command", "dim"))
    for note in command.started.get("notes") or []:
        console.print(_text(f"  {note}", "yellow"))
    done = command.finished
    if done is None:
        console.print(_text("  no result: the run stopped during this command", "yellow"))
        return
    output = clean_text(str(done.get("output") or ""))
    if full:
        top, bottom, hidden = output.rstrip("\n").splitlines(), [], 0
    else:
        top, bottom, hidden = fold(output, head, tail)
    for line in top:
        console.print(Text(f"  │ {line}", style="dim"), soft_wrap=True)
    if hidden:
        console.print(Text(f"  … {hidden} lines hidden (agentcli show --full)", style="dim italic"))
    for line in bottom:
        console.print(Text(f"  │ {line}", style="dim"), soft_wrap=True)
    if done.get("truncated") and done.get("output_path"):
        console.print(_text(f"  (output cut in the journal; all of it: {done['output_path']})", "dim"))
    seconds = done.get("duration")
    took = f" · {seconds:.2f}s" if isinstance(seconds, (int, float)) else ""
    if done.get("syntax_error"):
        console.print(Text("  syntax error, not run", style="red"))
    elif done.get("timed_out"):
        console.print(_text(f"  timed out{took}", "red"))
    else:
        code = done.get("exit_code")
        killed = f" ({done['killed_reason']})" if done.get("killed_reason") else ""
        console.print(_line((f"  exit {code}{killed}", "green" if code == 0 else "red"), (took, "dim")))


def _event(console: Console, event: dict, *, first_plan) -> None:
    kind = event.get("type")
    if kind == "format_error":
        console.print(_text(f"objection ({event.get('count', '?')}): {event.get('message', '')}", "yellow"))
    elif kind == "nudge":
        console.print(_text(f"looks stuck: {event.get('reason', '')}; told the model", "yellow"))
    elif kind == "notice":
        console.print(_text(event.get("message", ""), "yellow" if event.get("level") == "warning" else "dim"))
    elif kind == "model_retry":
        console.print(
            _text(f"model call failed ({event.get('error', '')}); retry {event.get('attempt', '?')}", "yellow")
        )
    elif kind == "context_compacted":
        console.print(
            _text(
                f"context compacted: {event.get('folded_messages', '?')} messages folded "
                f"({event.get('tokens_before', '?')} → {event.get('tokens_after', '?')} tokens)",
                "dim",
            )
        )
    elif kind == "plan_updated":
        steps = list(map(str, event.get("steps") or []))
        if steps != first_plan:
            console.print(_text("plan revised:\n" + "\n".join(f"  {i}. {s}" for i, s in enumerate(steps, 1)), "blue"))
    elif kind == "model_switched":
        switch = f"{event.get('from_model', '?')} → {event.get('to_model', '?')} ({event.get('reason', '')})"
        console.print(_text(f"model switched: {switch}", "yellow"))
    elif kind == "model_cache_hit":
        console.print(_text(f"reply from the response cache ({event.get('model', '?')})", "dim"))
    else:
        console.print(_text(describe(event), "dim"))


def _result(run: Run) -> Panel:
    result = run.result or {}
    status = run.status
    style = STATUS_STYLE.get(status, "red")
    parts = [_line((status, f"bold {style}"), (f": {result.get('reason', '')}", ""))]
    if result.get("summary"):
        parts.append(_text(result["summary"]))
    if result.get("diffstat"):
        parts += [Text(""), _text(str(result["diffstat"]).strip("\n"))]
    files = result.get("files_changed") or []
    if files:
        parts.append(_text("files changed: " + ", ".join(map(str, files)), "dim"))
    elif declared_done(status, result.get("standing_doubt") or ""):
        parts.append(Text("no files changed", style="dim"))
    for key, label in (("branch", "branch"), ("commit", "commit"), ("patch", "patch")):
        if result.get(key):
            parts.append(_text(f"{label} {result[key]}", "dim"))
    parts += [
        Text(""),
        _text(
            f"{run.steps} steps · {run.tokens_in:,} tokens in · {run.tokens_out:,} out · {duration(run.wall_time)}"
            + (f" · {cost(run.cost, precise=True)}" if run.cost else ""),
            "dim",
        ),
    ]
    return Panel(Group(*parts), border_style=style, expand=False)
