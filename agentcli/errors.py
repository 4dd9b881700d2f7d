"""Errors that end a command with a one-line message and a documented exit code."""

from __future__ import annotations

EXIT_FINISHED = 0
EXIT_NOT_FINISHED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130


class AgentcliError(Exception):
    """A failure the user can act on: shown as one line, never as a traceback."""

    exit_code = EXIT_USAGE


class UsageError(AgentcliError):
    """Bad flags, bad config, bad input files."""

    exit_code = EXIT_USAGE


class ComponentUnavailable(AgentcliError):
    """A required component (model endpoint, sandbox backend, engine) cannot be used."""

    exit_code = EXIT_UNAVAILABLE
