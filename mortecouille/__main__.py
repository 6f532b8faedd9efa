"""``python -m mortecouille``: the same command line as the ``mortecouille`` script."""

from mortecouille.cli.main import main

main()
