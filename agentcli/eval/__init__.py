"""`agentcli eval`: run a suite of tasks through an agent in fresh work dirs and score them with their tests."""
