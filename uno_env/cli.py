"""The ``uno-env`` command line: subcommands are added by later modules."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Dispatch ``uno-env <command>``."""
    args = sys.argv[1:] if argv is None else argv
    commands = {"demo": "uno_env.demo", "evaluate": "agents.tournament", "play": "uno_env.play",
                "train": "training.train"}
    if not args or args[0] not in commands:
        print(f"usage: uno-env {{{','.join(commands)}}} [options]", file=sys.stderr)
        raise SystemExit(2)
    module = __import__(commands[args[0]], fromlist=["main"])
    module.main(args[1:])


if __name__ == "__main__":
    main()
