"""`python -m loca ...` runs the command line."""

from loca.cli import app

app(prog_name="loca")
