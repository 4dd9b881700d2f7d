"""The REPL's view of a run: the model's prose streamed as it arrives, command output shown live.

Commands and their outputs are folded like `agentcli solve` shows them (first lines, a count of the
hidden ones, last lines); while a command runs its first lines appear as they are written, with a
spinner that counts the seconds.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from agentcli import untrusted
from agentcli.events import (
    CommandFinished,
    CommandStarted,
    ModelReplied,
    ModelStarted,
    PlanUpdated,
    ReplyAskedAgain,
    RunFinished,
    RunStarted,
    TokenStreamed,
)
from agentcli.sandbox.channel import clean_output
from agentcli.ui.console import HEAD_LINES, TAIL_LINES, ConsoleRenderer

_POLL = 0.05
_FENCES = ("```", "~~~")


class ProseStream:
    """Filters a streamed reply down to its prose: fenced code blocks are held back, since each
    command is shown when it runs. Feed pieces as they come; `finish()` flushes the rest."""

    def __init__(self) -> None:
        self.in_fence = False
        self._line = ""  # the start of a line, held until it is known not to open or close a fence
        self._deciding = True
        self._newlines = 2  # newlines just written; 2 at the start so leading blank lines are dropped

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for ch in piece:
            if self._deciding:
                self._line += ch
                if ch == "\n":
                    self._end_line(out)
                    continue
                head = self._line.lstrip(" \t")
                if not head or any(f.startswith(head) for f in _FENCES):
                    continue  # could still be a fence
                if head.startswith(_FENCES):
                    continue  # a fence line: held until its end, then dropped
                self._deciding = False
                self._emit(out, self._line)
                self._line = ""
            elif ch == "\n":
                self._deciding = True
                self._emit(out, ch)
            else:
                self._emit(out, ch)
        return "".join(out)

    def finish(self) -> str:
        out: list[str] = []
        if self._line and not self._line.lstrip(" \t").startswith(_FENCES):
            self._emit(out, self._line)
        self._line = ""
        if self._newlines == 0:
            out.append("\n")
        return "".join(out)

    def _end_line(self, out: list[str]) -> None:
        line, self._line = self._line, ""
        if line.lstrip(" \t").startswith(_FENCES):
            self.in_fence = not self.in_fence
            return
        self._emit(out, line)

    def _emit(self, out: list[str], text: str) -> None:
        if self.in_fence:
            return
        for ch in text:
            if ch == "\n":
                if self._newlines >= 2:
                    continue  # at most one blank line, e.g. where a code block was taken out
                self._newlines += 1
            else:
                self._newlines = 0
            out.append(ch)


class OutputTail:
    """Follows the output file of the command that is running and prints its first lines live.

    The sandbox writes each command's output to `<control dir>/<id>.out`; the file to follow is the
    first one that appears after the command started.
    """

    def __init__(self, control_dir: Path, console: Console, status=None, limit: int = HEAD_LINES):
        self.control_dir = control_dir
        self.console = console
        self.status = status
        self.limit = limit
        self.known = set(control_dir.glob("*.out")) if control_dir.is_dir() else set()
        self.path: Path | None = None
        self.lines = 0  # complete lines seen
        self.shown = 0  # lines printed live
        self._offset = 0
        self._partial = b""
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._follow, name="agentcli-output-tail", daemon=True)
        self._thread.start()

    @property
    def total(self) -> int:
        """Lines of output so far, counting an unfinished last line."""
        return self.lines + (1 if self._partial else 0)

    def stop(self) -> None:
        """Stop following, after reading whatever the file holds now."""
        self._stop.set()
        self._thread.join(timeout=2)
        if self.path is None:
            self._find()
        self._read()

    def _follow(self) -> None:
        while not self._stop.wait(_POLL):
            if self.path is None:
                self._find()
            if self.path is not None:
                self._read()
            if self.status is not None:
                seconds = time.monotonic() - self._started
                more = f" · {self.lines} lines" if self.lines > self.shown else ""
                self.status.update(f"running {seconds:.0f}s{more} · Ctrl-C stops it")

    def _find(self) -> None:
        if not self.control_dir.is_dir():
            return
        fresh = sorted(set(self.control_dir.glob("*.out")) - self.known)
        if fresh:
            self.path = fresh[-1]

    def _read(self) -> None:
        if self.path is None:
            return
        try:  # the sandbox writes there: a link it planted is not followed
            with untrusted.open_file(self.control_dir, self.path.name) as f:
                f.seek(self._offset)
                chunk = f.read(1 << 20)
        except OSError:
            return
        if not chunk:
            return
        self._offset += len(chunk)
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        for raw in complete:
            self.lines += 1
            if self.shown < self.limit:
                self.shown += 1
                self.console.print(Text("  " + clean_output(raw), style="dim"), soft_wrap=True)


class LiveRenderer(ConsoleRenderer):
    """Events as the REPL shows them. `control_dir` is where the sandbox writes command outputs."""

    def __init__(self, console: Console, control_dir: Path | None = None):
        super().__init__(console)
        self.control_dir = control_dir
        self._stream: ProseStream | None = None
        self._streamed = False
        self._tail: OutputTail | None = None

    def reset(self) -> None:
        """After an interrupt: stop any spinner and any output tail, end a half-written line."""
        self._stop_spinner()
        if self._tail is not None:
            self._tail.stop()
            self._tail = None
        if self._stream is not None:
            self.console.print(self._stream.finish(), end="", markup=False, highlight=False)
            self._stream = None

    def _on_run_started(self, e: RunStarted) -> None:
        pass  # the REPL's banner says it once

    def _on_model_started(self, e: ModelStarted) -> None:
        self._stream = ProseStream()
        self._streamed = False
        super()._on_model_started(e)

    def _on_token(self, e: TokenStreamed) -> None:
        if self._stream is None:
            return
        visible = self._stream.feed(e.text)
        if visible:
            self._stop_spinner()
            self._streamed = True
            self.console.print(Text(visible, style="italic"), end="", soft_wrap=True)

    def _on_model_replied(self, e: ModelReplied) -> None:
        if self._stream is not None and self._streamed:
            self._stop_spinner()
            rest = self._stream.finish()
            self.console.print(Text(rest, style="italic"), end="", soft_wrap=True)
            self._stream = None
            return
        self._stream = None
        super()._on_model_replied(e)

    def _on_reply_asked_again(self, e: ReplyAskedAgain) -> None:
        if self._stream is not None and self._streamed:
            self.console.print(Text(self._stream.finish(), style="italic"), soft_wrap=True)
        self._stream, self._streamed = ProseStream(), False  # the reply asked for next streams afresh
        super()._on_reply_asked_again(e)

    def _on_plan_updated(self, e: PlanUpdated) -> None:
        if not self._streamed:  # a streamed plan was just read as it came
            super()._on_plan_updated(e)

    def _on_command_started(self, e: CommandStarted) -> None:
        super()._on_command_started(e)
        status = None
        if self.console.is_terminal:
            self._status = status = self.console.status("running · Ctrl-C stops it", spinner="dots")
            status.start()
        if self.control_dir is not None:
            self._tail = OutputTail(self.control_dir, self.console, status)

    def _on_command_finished(self, e: CommandFinished) -> None:
        tail, self._tail = self._tail, None
        if tail is not None:
            tail.stop()
        self._stop_spinner()
        if tail is None or tail.path is None:
            super()._on_command_finished(e)
            return
        self._print_rest(tail, e)
        super()._on_command_finished(dataclasses.replace(e, output=""))  # the exit status line

    def _print_rest(self, tail: OutputTail, e: CommandFinished) -> None:
        """What the live view left out: the lines after the first ones, folded when long."""
        text = clean_output(_read_end(tail.path)) if tail.path else ""
        lines = text.rstrip("\n").splitlines() if text.strip() else []
        remaining = tail.total - tail.shown
        if remaining <= 0:
            return
        if remaining <= TAIL_LINES + 1:
            shown = lines[-remaining:]
        else:
            self.console.print(
                f"  [dim]… {remaining - TAIL_LINES} lines hidden; full output: {escape(e.output_path or '')}[/]"
            )
            shown = lines[-TAIL_LINES:]
        if shown:
            self.console.print(Text("\n".join("  " + line for line in shown), style="dim"), soft_wrap=True)

    def _on_result(self, e: RunFinished) -> None:
        self.reset()
        colour = {"finished": "green", "interrupted": "yellow"}.get(e.status, "red")
        head = f"[bold {colour}]{e.status}[/]"
        if e.status == "finished":
            line = f"{head}: {escape(e.summary)}" if e.summary else head
        elif e.status == "interrupted":
            line = head
        else:
            line = f"{head}: {escape(e.reason)}"
        self.console.print(line)
        if e.diffstat:
            self.console.print(Text(e.diffstat.rstrip("\n"), style="dim"))
            self.console.print("[dim]/diff shows the change, /undo takes this task back[/]")
        cost = f" · ${e.cost:.4f}" if e.cost else ""
        self.console.print(
            f"[dim]{e.steps} steps · {e.tokens_in + e.tokens_out:,} tokens · {e.wall_time:.1f}s{cost}[/]"
        )


def _read_end(path: Path, size: int = 64 * 1024) -> bytes:
    """The last `size` bytes of an output file (whole lines only), however large it is."""
    try:
        with untrusted.open_file(path.parent, path.name) as f:
            f.seek(0, 2)
            end = f.tell()
            f.seek(max(0, end - size))
            data = f.read()
    except OSError:
        return b""
    if end > size:
        data = data[data.find(b"\n") + 1 :]
    return data
