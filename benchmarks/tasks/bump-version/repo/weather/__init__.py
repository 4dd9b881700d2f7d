"""Tiny weather report client."""

__version__ = "1.4.2"
