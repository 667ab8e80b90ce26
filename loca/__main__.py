"""`python -m loca ...` runs the command line."""

from loca.cli import main

main()
