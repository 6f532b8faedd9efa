"""``python -m mortecouille``: the same command line as the ``mortecouille`` script."""

from mortecouille.cli.launch import main

main()
