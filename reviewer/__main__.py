from reviewer.cli import cli

cli()
