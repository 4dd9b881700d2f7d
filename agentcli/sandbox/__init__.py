"""Sandboxes that run the agent's commands behind one `Sandbox` protocol."""
