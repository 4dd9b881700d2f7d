"""The user's repository: checkpoints, diffs, and what the agent knows of the code."""
