"""`agentcli show --html`: one self-contained page to read a run.

The page has its style inline and no script; it loads nothing (no fonts, scripts or images) and says so to
the browser with a Content-Security-Policy that allows neither scripts nor any fetch. Everything taken from
the journal (the task, the model's replies, commands and their output) is untrusted and HTML-escaped.
"""

from __future__ import annotations

import html

from agentcli.events import declared_done
from agentcli.ui.console import prose_of
from agentcli.ui.runs import Command, Run, Step, clean_text, cost, describe, duration, when

OPEN_STEPS = 30  # steps are shown open up to this many, else closed

CSS = """
:root { --fg:#1f2328; --muted:#59636e; --bg:#ffffff; --panel:#f6f8fa; --line:#d1d9e0; --code:#f6f8fa;
  --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; --accent:#0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --panel:#151b23; --line:#3d444d; --code:#151b23;
    --ok:#3fb950; --bad:#f85149; --warn:#d29922; --accent:#4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 28px 24px 60px; }
h1 { font-size: 22px; line-height: 1.3; margin: 0 0 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 28px 0 8px; }
pre, code { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin: 6px 0;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 10px; border-radius: 999px; font-size: 13px; font-weight: 600;
  color: #fff; background: var(--bad); vertical-align: middle; }
.badge.finished { background: var(--ok); } .badge.unfinished { background: var(--warn); }
.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px 18px;
  margin: 16px 0 0; padding: 12px 14px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.meta div { min-width: 0; } .meta div.wide { grid-column: span 2; } .meta dt { font-size: 12px; color: var(--muted); }
.meta dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.result { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px; padding: 10px 14px; }
.result.finished { border-left-color: var(--ok); } .result.unfinished { border-left-color: var(--warn); }
.result p { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
ol.plan { margin: 0; padding-left: 24px; }
details.step { border: 1px solid var(--line); border-radius: 8px; margin: 10px 0; background: var(--bg); }
details.step > summary { cursor: pointer; padding: 8px 12px; background: var(--panel); border-radius: 8px;
  list-style-position: inside; overflow-wrap: anywhere; }
details.step[open] > summary { border-bottom: 1px solid var(--line); border-radius: 8px 8px 0 0; }
.step-body { padding: 6px 14px 10px; }
.num { font-weight: 700; margin-right: 6px; }
.dim { color: var(--muted); } .ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
.thought { font-style: italic; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
.cmd { margin: 12px 0 4px; } .cmd pre.command { border-left: 3px solid var(--accent); }
.status { font-size: 13px; margin: 2px 0 8px; }
.note { margin: 6px 0; padding: 4px 10px; border-left: 3px solid var(--warn); background: var(--panel);
  white-space: pre-wrap; overflow-wrap: anywhere; }
.note.info { border-left-color: var(--line); }
details.reply > summary { cursor: pointer; font-size: 13px; color: var(--muted); }
footer { margin-top: 36px; font-size: 12px; color: var(--muted); }
"""


def _e(value: object) -> str:
    """Untrusted text as HTML: cleaned of control characters and escaped (quotes included)."""
    return html.escape(clean_text(str(value)), quote=True)


def render_page(run: Run) -> str:
    result = run.result or {}
    status = run.status
    parts: list[str] = []
    add = parts.append
    title = " ".join(run.task.split())[:80] or run.id
    add("<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>")
    add(
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:; form-action 'none'; base-uri 'none'\">"
    )
    add('<meta name=viewport content="width=device-width, initial-scale=1">')
    add('<meta name=referrer content="no-referrer">')
    add(f"<title>agentcli · {_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>")

    add(f'<p class=dim>agentcli run <code>{_e(run.id)}</code> <span class="badge {_e(status)}">{_e(status)}</span></p>')
    add(f"<h1>{_e(run.task.strip() or '(no task recorded)')}</h1>")
    meta = [
        ("status", status),
        ("model", run.model),
        ("sandbox", run.sandbox),
        ("steps", str(run.steps)),
        ("tokens in / out", f"{run.tokens_in:,} / {run.tokens_out:,}"),
        ("cost", cost(run.cost, precise=True)),
        ("started", when(run.start_time)),
        ("wall time", duration(run.wall_time)),
    ]
    if run.workdir:
        meta.append(("work directory", run.workdir))
    cells = [f"<div{' class=wide' if len(v) > 24 else ''}><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in meta]
    add("<dl class=meta>" + "".join(cells) + "</dl>")

    add("<h2>Result</h2>")
    add(_result(run, result))

    plans = run.plans
    if plans:
        revised = f" (revised {len(plans) - 1}×)" if len(plans) > 1 else ""
        add(f"<h2>Plan{_e(revised)}</h2>")
        add("<ol class=plan>" + "".join(f"<li>{_e(step)}</li>" for step in plans[-1]) + "</ol>")

    before, steps = run.timeline
    add(f"<h2>Steps ({len(steps)})</h2>")
    for event in before:
        add(_event(event, first_plan=plans[0] if plans else None))
    for step in steps:
        add(_step(step, open_=len(steps) <= OPEN_STEPS, first_plan=plans[0] if plans else None))

    add(f"<footer>Journal: <code>{_e(run.journal)}</code></footer>")
    add("</main>\n</body>\n</html>\n")
    return "\n".join(parts)


def _result(run: Run, result: dict) -> str:
    status = run.status
    if run.result is None:
        last = run.events[-1].get("type", "?") if run.events else "nothing"
        return (
            f'<div class="result unfinished"><p><strong>unfinished</strong>: the journal has no result '
            f"(its last event: {_e(last)}). The run was killed, or is still going.</p></div>"
        )
    out = [f'<div class="result {_e(status)}">']
    out.append(f"<p><strong>{_e(status)}</strong>: {_e(result.get('reason', ''))}</p>")
    if result.get("summary"):
        out.append(f"<p>{_e(result['summary'])}</p>")
    if result.get("diffstat"):
        out.append(f"<pre class=diffstat>{_e(str(result['diffstat']).strip(chr(10)))}</pre>")
    files = result.get("files_changed") or []
    if files:
        out.append("<p class=dim>files changed: " + ", ".join(f"<code>{_e(f)}</code>" for f in files) + "</p>")
    elif declared_done(status, result.get("standing_doubt") or ""):
        out.append("<p class=dim>no files changed</p>")
    for key in ("branch", "commit", "patch"):
        if result.get(key):
            out.append(f"<p class=dim>{key} <code>{_e(result[key])}</code></p>")
    out.append("</div>")
    return "\n".join(out)


def _step(step: Step, *, open_: bool, first_plan) -> str:
    commands = step.commands
    label = f"Step {step.number}" if step.number else "Before the first reply"
    summary = [f"<span class=num>{_e(label)}</span>"]
    if commands:
        first = commands[0].text.splitlines()[0] if commands[0].text.strip() else ""
        summary.append(f"<code>$ {_e(first[:120])}</code>")
        summary.append(_status_of(commands[-1], short=True))
    elif any(isinstance(i, dict) and i.get("type") == "format_error" for i in step.items):
        summary.append("<span class=warn>objection</span>")
    elif step.reply is not None:
        thought = prose_of(str(step.reply.get("text", ""))).splitlines()
        summary.append(f"<span class=dim>{_e(thought[0][:120] if thought else 'reply')}</span>")
    out = [f"<details class=step{' open' if open_ else ''}><summary>{' '.join(summary)}</summary><div class=step-body>"]
    if step.reply is not None:
        reply = step.reply
        text = str(reply.get("text", ""))
        thought = prose_of(text)
        if thought:
            out.append(f"<p class=thought>{_e(thought)}</p>")
        stats = f"{int(reply.get('prompt_tokens') or 0):,} tokens in · {int(reply.get('completion_tokens') or 0):,} out"
        if isinstance(reply.get("duration"), (int, float)):
            stats += f" · {duration(reply['duration'])}"
        if reply.get("cost"):
            stats += f" · {cost(float(reply['cost']), precise=True)}"
        out.append(
            f"<details class=reply><summary>the model's reply ({_e(stats)})</summary><pre>{_e(text)}</pre></details>"
        )
    for item in step.items:
        out.append(_command(item) if isinstance(item, Command) else _event(item, first_plan=first_plan))
    out.append("</div></details>")
    return "\n".join(out)


def _status_of(command: Command, *, short: bool = False) -> str:
    done = command.finished
    if done is None:
        return "<span class=warn>no result: the run stopped during this command</span>"
    seconds = done.get("duration")
    took = f" · {seconds:.2f}s" if isinstance(seconds, (int, float)) else ""
    if done.get("syntax_error"):
        return "<span class=bad>syntax error, not run</span>"
    if done.get("timed_out"):
        return f"<span class=bad>timed out{_e(took)}</span>"
    code = done.get("exit_code")
    killed = f" ({done['killed_reason']})" if done.get("killed_reason") and not short else ""
    css = "ok" if code == 0 else "bad"
    return f"<span class={css}>exit {_e(code)}{_e(killed)}</span><span class=dim>{_e(took)}</span>"


def _command(command: Command) -> str:
    out = ["<div class=cmd>", f"<pre class=command>$ {_e(command.text)}</pre>"]
    for note in command.started.get("notes") or []:
        out.append(f"<div class='note info'>{_e(note)}</div>")
    done = command.finished
    if done is not None:
        output = str(done.get("output") or "")
        if output.strip():
            out.append(f"<pre class=output>{_e(output.rstrip(chr(10)))}</pre>")
        else:
            out.append("<p class='status dim'>(no output)</p>")
        if done.get("truncated"):
            where = f"; all of it: {done['output_path']}" if done.get("output_path") else ""
            total = done.get("total_bytes")
            size = f" of {int(total):,} bytes" if isinstance(total, int) else ""
            out.append(f"<p class='status dim'>{_e(f'output cut in the journal{size}{where}')}</p>")
    out.append(f"<p class=status>{_status_of(command)}</p></div>")
    return "\n".join(out)


def _event(event: dict, *, first_plan) -> str:
    kind = event.get("type")
    if kind == "format_error":
        count, message = _e(event.get("count", "?")), _e(event.get("message", ""))
        return f"<div class=note><strong>objection ({count})</strong>: {message}</div>"
    if kind == "nudge":
        return f"<div class=note><strong>looks stuck</strong>: {_e(event.get('reason', ''))}; told the model</div>"
    if kind == "notice":
        level = "warn" if event.get("level") == "warning" else "info"
        return f"<div class='note {level}'>{_e(event.get('message', ''))}</div>"
    if kind == "model_retry":
        return (
            f"<div class=note>model call failed ({_e(event.get('error', ''))}); "
            f"retry {_e(event.get('attempt', '?'))}</div>"
        )
    if kind == "context_compacted":
        return (
            f"<div class='note info'>context compacted: {_e(event.get('folded_messages', '?'))} messages folded "
            f"({_e(event.get('tokens_before', '?'))} → {_e(event.get('tokens_after', '?'))} tokens)</div>"
        )
    if kind == "plan_updated":
        steps = list(map(str, event.get("steps") or []))
        if steps == first_plan:
            return ""
        items = "".join(f"<li>{_e(s)}</li>" for s in steps)
        return f"<div class='note info'><strong>plan revised</strong><ol class=plan>{items}</ol></div>"
    if kind == "model_switched":
        switch = f"{event.get('from_model', '?')} → {event.get('to_model', '?')} ({event.get('reason', '')})"
        return f"<div class=note><strong>model switched</strong>: {_e(switch)}</div>"
    if kind == "model_cache_hit":
        return f"<div class='note info'>reply from the response cache ({_e(event.get('model', '?'))})</div>"
    return f"<div class='note info'>{_e(describe(event))}</div>"
