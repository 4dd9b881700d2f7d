"""The plan-act-observe loop."""
