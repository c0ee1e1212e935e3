"""The applications above ``agents``: the ``uno-env`` command line, the terminal game, the web app."""
