"""The ``uno-env`` command: one entry point, one line per command (``uno-env --help``).

::

    uno-env play        play UNO in the terminal against AI opponents
    uno-env watch       watch AI agents play one game, told event by event
    uno-env evaluate    play agents against each other and report win rates
    uno-env benchmark   an agent's benchmark card: win rates and a rating against a fixed reference pool
    uno-env train       train a PPO policy from a YAML config
    uno-env demo        what `make demo` runs: train the quickstart config briefly, then evaluate it
    uno-env serve       play in the browser (the web server; needs uno-env[web])

``uno-env COMMAND --help`` lists a command's options; ``uno-env help COMMAND`` says the same.
Each command lives in its own module and is imported only when it runs, so ``uno-env play``
starts without the training libraries; ``train`` and ``demo`` need the ``train`` extra
(``pip install "uno-env[train]"``), ``serve`` the ``web`` extra, and each says so in one line
when its extra is missing.

Every command runs its networks with one BLAS thread per process (``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` default to 1 before numpy loads; a value already
set is kept): the agents' matrices are small, a search or a tournament worker is one process a core,
and OpenBLAS's default of a thread per core made ``guided`` about four times slower on a busy
2-core machine (docs/agents.md, "How long it thinks").
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported (below, by agents)

import argparse  # noqa: E402
import difflib  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from agents.human import InputEnded  # noqa: E402

__all__ = ["COMMANDS", "Command", "build_parser", "main", "version"]

TRAIN_EXTRA_MODULES = frozenset({"yaml", "torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm"})
WEB_EXTRA_MODULES = frozenset({"fastapi", "starlette", "pydantic", "uvicorn", "websockets"})
# What each extra's libraries are called in the one-line message, and the modules that mean it is missing.
EXTRAS: dict[str, tuple[str, frozenset[str]]] = {"train": ("training libraries", TRAIN_EXTRA_MODULES),
                                                 "web": ("web server's libraries", WEB_EXTRA_MODULES)}


@dataclass(frozen=True)
class Command:
    """A subcommand: its one-line summary and the module whose ``main(argv)`` runs it."""

    name: str
    summary: str
    module: str
    extra: str | None = None  # the pip extra its libraries come from


COMMANDS: tuple[Command, ...] = (
    Command("play", "play UNO in the terminal against AI opponents", "uno_app.terminal"),
    Command("watch", "watch AI agents play one game, told event by event", "uno_app.watch"),
    Command("evaluate", "play agents against each other and report win rates", "uno_app.evaluate"),
    Command("benchmark", "an agent's benchmark card: win rates and a rating against a fixed reference pool",
            "uno_app.benchmark"),
    Command("train", "train a PPO policy from a YAML config (needs uno-env[train])", "training.cli", "train"),
    Command("demo", "what `make demo` runs: train the quickstart config briefly, then evaluate it "
                    "(needs uno-env[train])", "training.tools.quickstart", "train"),
    Command("serve", "play in the browser (the web server; needs uno-env[web])", "uno_app.web.server", "web"),
)
_BY_NAME = {c.name: c for c in COMMANDS}


def version() -> str:
    """The installed distribution's version (``uno_env.__version__`` when not installed)."""
    from importlib import metadata

    try:
        return metadata.version("uno-env")
    except metadata.PackageNotFoundError:
        import uno_env

        return str(uno_env.__version__)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: ``--help``, ``--version`` and a command with its own options."""
    width = max(len(c.name) for c in COMMANDS) + 2
    listing = "\n".join(f"  {c.name:<{width}}{c.summary}" for c in COMMANDS)
    parser = argparse.ArgumentParser(
        prog="uno-env",
        usage="uno-env [-h] [--version] COMMAND [OPTIONS...]",
        description="UNO for reinforcement learning: exact rules for four editions, baseline and trained "
                    "agents, a tournament harness and a trainer.",
        epilog=f"commands:\n{listing}\n  {'help':<{width}}help [COMMAND]: this text, or a command's options\n\n"
               "`uno-env COMMAND --help` lists a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"uno-env {version()}",
                        help="print the version and exit")
    parser.add_argument("command", nargs="?", metavar="COMMAND", help="one of the commands below")
    parser.add_argument("options", nargs=argparse.REMAINDER, metavar="OPTIONS",
                        help="the command's options (see `uno-env COMMAND --help`)")
    return parser


def _missing(command: Command, err: ModuleNotFoundError) -> int | None:
    """A one-line message for a command whose libraries are not installed; None if that is not the cause."""
    top = (err.name or "").split(".")[0]
    if command.extra is None or top not in EXTRAS[command.extra][1]:
        return None
    print(f"uno-env {command.name}: needs the {EXTRAS[command.extra][0]} (module {top!r} is missing); "
          f'install them with: pip install "uno-env[{command.extra}]"', file=sys.stderr)
    return 1


def run(command: Command, options: Sequence[str]) -> int:
    """Run a command's ``main(options)``; its exit status."""
    try:
        module = importlib.import_module(command.module)
        entry: Callable[[list[str]], int | None] = module.main
        code = entry(list(options))
    except ModuleNotFoundError as err:
        status = _missing(command, err)
        if status is None:
            raise
        return status
    except InputEnded as ended:  # a human seat whose input closed: the game cannot go on
        print(f"uno-env {command.name}: {ended}; the game stops here", file=sys.stderr)
        return 1
    except SystemExit as exit_:  # a command that exits by itself (argparse, --help)
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return code if isinstance(code, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``uno-env``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "help":
        if not args.options:
            parser.print_help()
            return 0
        name = args.options[0]
        if name not in _BY_NAME:
            return _unknown(parser, name)
        return run(_BY_NAME[name], ["--help"])
    if args.command not in _BY_NAME:
        return _unknown(parser, args.command)
    return run(_BY_NAME[args.command], args.options)


def _unknown(parser: argparse.ArgumentParser, name: str) -> int:
    close = difflib.get_close_matches(name, list(_BY_NAME), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    parser.print_usage(sys.stderr)
    print(f"uno-env: error: unknown command {name!r}{hint}; commands are {', '.join(_BY_NAME)}, help",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
