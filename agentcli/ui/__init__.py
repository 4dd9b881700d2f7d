"""Showing events to people and programs."""
