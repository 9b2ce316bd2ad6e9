from evreg.cli.main import main

main()
