from evreg.cli import main

main()
