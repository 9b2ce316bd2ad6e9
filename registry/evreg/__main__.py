from evreg.cli.main import run

run()
