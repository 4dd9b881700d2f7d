"""Reading the user's input with prompt_toolkit: the task prompt, approval questions, completion.

Enter sends; Esc then Enter (or Alt-Enter), or a line ending in a backslash, starts a new line;
pasted text keeps its newlines. Tab completes slash commands and file paths. History is kept in a
file across sessions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI, FormattedText
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from agentcli.ui.approval import ALWAYS, EDIT, NO, YES, Answer
from agentcli.ui.edits import CommandKind

HIDDEN_DIRS = {".git", ".agentcli"}


def editing_bindings() -> KeyBindings:
    """Enter sends, Esc-Enter and a trailing backslash continue; Ctrl-C clears a line, or quits an empty one."""
    kb = KeyBindings()

    @kb.add("enter")
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\") and buffer.document.is_cursor_at_the_end:
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return kb


class ReplCompleter(Completer):
    """Slash commands (with their help) at the start of the line, file paths under the repository on Tab."""

    def __init__(self, root: Path, commands: Callable[[], Iterable[tuple[str, str]]], modes: Iterable[str]):
        self.root = root
        self.commands = commands
        self.modes = tuple(modes)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name, help_text in self.commands():
                if name.startswith(text[1:]):
                    yield Completion("/" + name, start_position=-len(text), display_meta=help_text)
            return
        if text.startswith("/mode "):
            word = text[len("/mode ") :]
            for mode in self.modes:
                if mode.startswith(word):
                    yield Completion(mode, start_position=-len(word))
            return
        if not complete_event.completion_requested:
            return  # paths only on Tab: a popup while typing prose is noise
        word = document.get_word_before_cursor(WORD=True).lstrip("!@\"'")
        yield from self._paths(word)

    def _paths(self, word: str) -> Iterable[Completion]:
        folder, _, prefix = word.rpartition("/")
        base = self.root / folder if folder else self.root
        try:
            base.resolve().relative_to(self.root.resolve())
            entries = sorted(os.scandir(base), key=lambda entry: entry.name)
        except (OSError, ValueError):
            return
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or name in HIDDEN_DIRS or (name.startswith(".") and not prefix):
                continue
            suffix = "/" if entry.is_dir() else ""
            yield Completion(name + suffix, start_position=-len(prefix), display=name + suffix)


def task_prompt(
    root: Path,
    history: Path | None,
    commands: Callable[[], Iterable[tuple[str, str]]],
    modes: Iterable[str],
    toolbar: Callable[[], str],
) -> PromptSession:
    """The prompt tasks and slash commands are typed at."""
    if history is not None:
        try:
            history.parent.mkdir(parents=True, exist_ok=True)
            store = FileHistory(str(history))
        except OSError:
            store = InMemoryHistory()
    else:
        store = InMemoryHistory()
    return PromptSession(
        history=store,
        completer=ReplCompleter(root, commands, modes),
        complete_while_typing=True,
        key_bindings=editing_bindings(),
        multiline=True,
        prompt_continuation=lambda width, line, wrapped: "… ".rjust(width),
        bottom_toolbar=lambda: FormattedText([("class:bottom-toolbar", " " + toolbar())]),
        enable_history_search=False,
    )


def ask_approval(command: str, kind: CommandKind) -> Answer:
    """One key: y(es), n(o), e(dit), a(lways for this kind); Enter is yes. Ctrl-C interrupts the task."""
    keys = {"y": YES, "n": NO, "e": EDIT}
    label = "[y]es  [n]o  [e]dit"
    if kind.edit or kind.programs:
        keys["a"] = ALWAYS
        label += f"  [a]lways for {kind.label}"
    choice = _one_key(ANSI(f"\x1b[1mRun it?\x1b[0m {label} › "), keys, default=YES)
    if choice == EDIT:
        session: PromptSession = PromptSession(key_bindings=editing_bindings(), multiline=True)
        return Answer(EDIT, session.prompt("edit › ", default=command))
    if choice == NO:
        session = PromptSession(key_bindings=editing_bindings(), multiline=True)
        return Answer(NO, session.prompt("why not? (tell the model, or Enter) › "))
    return Answer(choice)


def _one_key(message: ANSI, keys: dict[str, str], default: str) -> str:
    """A single key press picks; the choice stays on screen after the question."""

    def pick(value: str):
        def handler(event: KeyPressEvent) -> None:
            event.current_buffer.text = value
            event.app.exit(result=value)

        return handler

    kb = KeyBindings()
    for key, value in keys.items():
        kb.add(key)(pick(value))
        kb.add(key.upper())(pick(value))
    kb.add("enter")(pick(default))
    kb.add("c-d")(pick(NO))
    kb.add("c-c")(lambda event: event.app.exit(exception=KeyboardInterrupt()))
    kb.add("<any>")(lambda event: None)
    session: PromptSession = PromptSession(key_bindings=kb)
    return session.prompt(message)
