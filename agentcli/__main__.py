from agentcli.cli.main import run

run()
