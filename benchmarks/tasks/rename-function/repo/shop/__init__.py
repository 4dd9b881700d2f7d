"""Pricing for a small online shop."""
