"""Applications built on ``uno_env`` and ``agents``: the ``uno-env`` command and the games people play.

* ``uno_app.cli``: the ``uno-env`` entry point (``play``, ``watch``, ``evaluate``, ``train``,
  ``demo``, ``serve``; ``uno-env --help``).
* ``uno_app.terminal``: ``uno-env play``, one person against AI opponents in the terminal.
* ``uno_app.watch``: ``uno-env watch``, AI agents playing one game, told event by event.
* ``uno_app.evaluate``: ``uno-env evaluate``, the command over ``agents.tournament``.
* ``uno_app.web``: ``uno-env serve``, browser play.

This is the top layer: ``uno_env.core`` <- ``uno_env`` <- ``agents`` <- ``training`` and
``uno_app``. Nothing below imports it (a test checks the direction).
"""
