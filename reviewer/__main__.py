from reviewer.cli.main import cli

cli()
