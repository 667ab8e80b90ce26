"""The one error class every refused input derives from: the command line answers it with a
one-line message and exit status 2, as it does a bad option."""


class BadInput(ValueError):
    """Input the gym refuses (a path that is not a world, a run directory that holds another
    run...); nothing was changed."""
