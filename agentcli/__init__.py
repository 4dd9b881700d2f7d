"""agentcli: a terminal coding agent for your own machine, your own models and a real sandbox."""

__version__ = "0.1.0"
