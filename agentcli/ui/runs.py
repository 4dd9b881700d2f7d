"""Runs as they were journaled: found by id or prefix, summarised for a listing, grouped into steps for `show`.

Everything here is read from journals (`<state>/repos/<repo>/sessions/<id>/events.jsonl`). What a journal holds
came partly from the model and the sandbox, so it is untrusted text: renderers pass it through `clean_text`
(terminal) or escape it (HTML), never interpret it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from agentcli.errors import UsageError
from agentcli.paths import repo_state_dir, state_dir

SESSION_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{2,32}$")
JOURNAL = "events.jsonl"

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_CARRIAGE = re.compile(r"[^\n]*\r(?!\n)")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str) -> str:
    """`text` safe to print: terminal escape sequences removed, a line overwritten by carriage returns shown as
    it ended, and any other control or direction-override character shown as a visible mark."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    text = _CARRIAGE.sub("", text)

    def mark(m: re.Match) -> str:
        code = ord(m.group())
        return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else f"<U+{code:04X}>"

    return _UNSAFE.sub(mark, text)


def fold(text: str, head: int, tail: int) -> tuple[list[str], list[str], int]:
    """The first `head` and last `tail` lines of `text` and how many were hidden between them."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= head + tail + 1:
        return lines, [], 0
    return lines[:head], lines[-tail:], len(lines) - head - tail


def session_start(session_id: str) -> float | None:
    """The start time encoded in a session id (`YYYYmmdd-HHMMSS-xxxxxx`, local time)."""
    try:
        return time.mktime(time.strptime(session_id[:15], "%Y%m%d-%H%M%S"))
    except (ValueError, OverflowError):
        return None


@dataclass
class Command:
    started: dict
    finished: dict | None = None

    @property
    def text(self) -> str:
        return str((self.finished or self.started).get("command", ""))


@dataclass
class Step:
    """What happened at one step: the model's reply, then its commands, objections and notices, in order.
    Step 0 is what agentcli ran before the model's first reply."""

    number: int
    reply: dict | None = None
    items: list = field(default_factory=list)  # Command or event dicts (format_error, nudge, notice, ...)

    @property
    def commands(self) -> list[Command]:
        return [item for item in self.items if isinstance(item, Command)]


class Run:
    """One journaled run."""

    def __init__(self, journal: Path, events: list[dict] | None = None):
        from agentcli.session.journal import read_events

        self.journal = journal
        self.id = journal.parent.name
        self.repo_folder = journal.parent.parent.parent
        self.events = events if events is not None else read_events(journal)

    @cached_property
    def started(self) -> dict:
        return next((e for e in self.events if e.get("type") == "run_started"), {})

    @cached_property
    def result(self) -> dict | None:
        results = [e for e in self.events if e.get("type") == "result"]
        return results[-1] if results else None

    @property
    def task(self) -> str:
        return str(self.started.get("task", ""))

    @property
    def model(self) -> str:
        return str(self.started.get("model", "?"))

    @property
    def sandbox(self) -> str:
        return str(self.started.get("sandbox", "?"))

    @property
    def workdir(self) -> str:
        return str(self.started.get("workdir", ""))

    @property
    def status(self) -> str:
        return str(self.result.get("status", "?")) if self.result else "unfinished"

    @cached_property
    def replies(self) -> list[dict]:
        return [e for e in self.events if e.get("type") == "model_replied"]

    def _total(self, result_key: str, reply_key: str, kind=int):
        if self.result is not None and self.result.get(result_key) is not None:
            return kind(self.result.get(result_key) or 0)
        return kind(sum(kind(e.get(reply_key) or 0) for e in self.replies))

    @property
    def steps(self) -> int:
        if self.result is not None and self.result.get("steps") is not None:
            return int(self.result["steps"])
        return len(self.replies)

    @property
    def tokens_in(self) -> int:
        return self._total("tokens_in", "prompt_tokens")

    @property
    def tokens_out(self) -> int:
        return self._total("tokens_out", "completion_tokens")

    @property
    def cost(self) -> float:
        return self._total("cost", "cost", float)

    @cached_property
    def start_time(self) -> float | None:
        found = session_start(self.id)
        if found is not None:
            return found
        times = [e["time"] for e in self.events if isinstance(e.get("time"), (int, float))]
        return min(times) if times else None

    @property
    def wall_time(self) -> float | None:
        if self.result is not None and self.result.get("wall_time") is not None:
            return float(self.result["wall_time"])
        times = [e["time"] for e in self.events if isinstance(e.get("time"), (int, float))]
        return max(times) - min(times) if len(times) > 1 else None

    @property
    def plans(self) -> list[list[str]]:
        return [list(map(str, e.get("steps") or [])) for e in self.events if e.get("type") == "plan_updated"]

    @cached_property
    def timeline(self) -> tuple[list[dict], list[Step]]:
        """Events before the first step (notices), and the steps in order."""
        before: list[dict] = []
        steps: list[Step] = []
        pending: dict[int, Command] = {}
        for event in self.events:
            kind = event.get("type")
            if kind in ("run_started", "result", "model_started", "token"):
                continue
            number = event.get("step")
            if isinstance(number, int) and (not steps or steps[-1].number != number):
                steps.append(Step(number))
            current = steps[-1] if steps else None
            if kind == "model_replied" and current is not None and current.reply is None:
                current.reply = event
            elif kind == "command_started" and current is not None:
                command = Command(event)
                pending[id(current)] = command
                current.items.append(command)
            elif kind == "command_finished" and current is not None:
                command = pending.pop(id(current), None)
                if command is not None and command.finished is None:
                    command.finished = event
                else:
                    current.items.append(Command(event, event))
            elif current is None:
                before.append(event)
            else:
                current.items.append(event)
        return before, steps


def repository_sessions(root: Path) -> Path:
    from agentcli.session.journal import sessions_dir

    return sessions_dir(root)


def session_dirs(folder: Path) -> list[Path]:
    """The session folders in a `sessions/` folder, newest first (ids sort by start time)."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if SESSION_ID.match(p.name) and p.is_dir() and not p.is_symlink()]
    return sorted(found, key=lambda p: p.name, reverse=True)


def repo_folders() -> list[Path]:
    """Every repository agentcli keeps state for."""
    repos = state_dir() / "repos"
    if not repos.is_dir():
        return []
    return sorted(p for p in repos.iterdir() if p.is_dir() and not p.is_symlink())


def repository_label(folder: Path, runs: list[Run]) -> str:
    """The host path of the repository a state folder belongs to, where a run recorded it (a run in a
    container records its own view, e.g. /work, which does not match the folder's hash); else the folder's
    name, `<name>-<hash>`."""
    for run in runs:
        workdir = run.workdir
        if workdir.startswith("/"):
            try:
                if repo_state_dir(Path(workdir)).name == folder.name:
                    return workdir
            except OSError:
                continue
    return folder.name


def find_session(query: str | None, root: Path | None) -> Path:
    """The journal of session `query` (an id or a unique prefix of one), looked for in the repository at `root`
    first, then in every repository agentcli keeps state for; with no query, the newest run of `root`."""
    if query is None:
        if root is None:
            raise UsageError("no session given and not in a repository agentcli has run in: agentcli show SESSION")
        dirs = [d for d in session_dirs(repository_sessions(root)) if (d / JOURNAL).is_file()]
        if not dirs:
            raise UsageError(f"no runs kept for {root}")
        return dirs[0] / JOURNAL
    query = query.strip()
    if not query:
        raise UsageError("empty session id")
    places = [repository_sessions(root)] if root is not None else []
    places.append(None)  # every repository
    for place in places:
        folders = [place] if place is not None else [f / "sessions" for f in repo_folders()]
        matches = [d for f in folders for d in session_dirs(f) if d.name.startswith(query) and (d / JOURNAL).is_file()]
        exact = [d for d in matches if d.name == query]
        if exact:
            return exact[0] / JOURNAL
        if len(matches) == 1:
            return matches[0] / JOURNAL
        if len(matches) > 1:
            names = ", ".join(sorted({d.name for d in matches})[:5])
            raise UsageError(f"session prefix {query!r} is ambiguous: {names}{', …' if len(matches) > 5 else ''}")
    raise UsageError(f"no session {query!r} (see `agentcli sessions`, or `agentcli sessions --all`)")


# Formatting shared by the listing, the terminal view and the page.


def describe(event: dict) -> str:
    """An event this version has no particular view of, in one line: its type and fields."""
    fields = ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "time"))
    return clip(f"{event.get('type', '?')}: {fields}", 300)


def when(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def age(seconds: float) -> str:
    """A short age: 45s, 12m, 5h, 3d, 6w, 2y."""
    seconds = max(0.0, seconds)
    for unit, size, limit in (("s", 1, 60), ("m", 60, 3600), ("h", 3600, 86400), ("d", 86400, 14 * 86400)):
        if seconds < limit:
            return f"{int(seconds // size)}{unit}"
    if seconds < 365 * 86400:
        return f"{int(seconds // (7 * 86400))}w"
    return f"{int(seconds // (365 * 86400))}y"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def cost(dollars: float, *, precise: bool = False) -> str:
    if not dollars:
        return "-"
    if precise:
        return f"${dollars:.4f}"
    return f"${dollars:.2f}" if dollars >= 0.01 else "<$0.01"


def short_model(model: str) -> str:
    """A model's name for a narrow column: `scripted:/path/x.json` is `scripted`, `provider/name` is `name`."""
    if model.startswith("scripted:"):
        return "scripted"
    return model.rsplit("/", 1)[-1] or model


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
