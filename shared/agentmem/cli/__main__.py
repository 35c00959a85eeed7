from agentmem.cli.main import cli

cli()
