"""``uno-env evaluate``: play agents against each other and report win rates.

::

    uno-env evaluate --agents rule random*3 --edition monster_high --games 10000 --workers 2
    uno-env evaluate --agents ppo rule --players 2 --out result.md --out result.json --plot result.png
    uno-env evaluate --round-robin --agents rule simple random random-uniform --players 2
    uno-env evaluate --agents ppo rule --players 2 --games 100 --replays replays/ --replay-games 0-4

A thin command over ``agents.tournament`` (``evaluate``, ``round_robin``): agents are specs
(``agents.registry``; typed here, so ``package.module:Class`` is allowed), ``ppo`` plays the
shipped checkpoint for the table, exactly as in ``uno-env play``. Every argument and every
``--out``/``--plot`` path is checked before the first game (a bad one exits with status 2 and
plays nothing); reports are written atomically. Progress goes to stderr: a bar on a
terminal, otherwise a line every few seconds (``--no-progress`` for none); the report goes
to stdout. ``--replays DIR`` then writes the games listed by ``--replay-games`` as replay files
(``uno_app.replays``; open them in ``uno-env serve``'s Replay view).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.registry import AgentSpecError, expand_repeats, parse_value
from agents.tournament import REPORT_FORMATS, UNITS, MatchResult, RoundRobinResult, evaluate, round_robin
from uno_env.core import EDITIONS, Rules

__all__ = ["PLOT_FORMATS", "build_parser", "check_writable", "main"]

PLOT_FORMATS = ("png", "svg", "pdf")


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an int >= ``minimum``, refused in words otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_natural_int = _int_at_least(0, "a non-negative integer")


def _rule_options(pairs: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--rule expects KEY=VALUE, got {pair!r}")
        options[key.strip().replace("-", "_")] = parse_value(value, f"--rule {pair}")
    return options


def check_writable(path: str, formats: Sequence[str], flag: str) -> None:
    """Raise ValueError unless ``path`` has one of ``formats`` as extension and can be written now.

    The check writes and removes a temporary file beside it, as the real (atomic) write will.
    """
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{flag} {path} is a directory")
    ext = os.path.splitext(path)[1][1:].lower()
    if ext not in formats:
        raise ValueError(f"{flag} {path}: use a file name ending in {', '.join('.' + f for f in formats)}")
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: the directory {folder} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".check"):
            pass
    except OSError as err:
        raise ValueError(f"{flag} {path} cannot be written: {err.strerror or err}") from None


def build_parser() -> argparse.ArgumentParser:
    """The ``uno-env evaluate`` argument parser (every flag has a help line)."""
    parser = argparse.ArgumentParser(
        prog="uno-env evaluate",
        description="Play agents against each other (seat rotation, duplicate deals) and report win rates.",
        epilog="examples:\n  uno-env evaluate --agents rule random*3 --games 10000 --workers 2\n"
               "  uno-env evaluate --agents ppo rule --players 2 --out r.md --plot r.png\n"
               "  uno-env evaluate --round-robin --agents rule simple random --players 2 --out rr.md\n"
               "agents: random, random-uniform, simple, rule, ismcts, guided, human, ppo, ppo:NAME, ppo:PATH (= ppo:path=PATH),\n"
               "  package.module:Class; options as name:key=value,key=value. ppo plays the shipped checkpoint for\n"
               "  the table that its card measures strongest: classic_2p_long_points for classic at 2 players,\n"
               "  classic_4p_points at 4, classic_3to6 at 3, 5 and 6, universal for every other table.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="one agent spec per seat (NAME*K repeats); with --round-robin the competitors")
    parser.add_argument("--edition", default="classic", choices=sorted(EDITIONS), help="which deck (default classic)")
    parser.add_argument("--players", type=int, default=None,
                        help="table size (default: the number of agents; 2 with --round-robin)")
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule option, e.g. --rule uno_call=auto --rule allow_bluff=false (repeatable)")
    parser.add_argument("--games", type=_positive_int, default=1000,
                        help="games per lineup, at least 1 (rounded up to whole deals; default 1000)")
    parser.add_argument("--unit", choices=UNITS, default="round", help="a game is one round (default) or a whole game")
    parser.add_argument("--seed", type=_natural_int, default=0, help="seed of every deal and agent (default 0)")
    parser.add_argument("--workers", type=_positive_int, default=1,
                        help="worker processes (results do not depend on it; default 1)")
    parser.add_argument("--round-robin", action="store_true", help="every set of --players agents plays a match")
    parser.add_argument("--out", action="append", default=[], metavar="FILE",
                        help="write the report (.md, .csv or .json); repeatable")
    parser.add_argument("--plot", metavar="FILE", help="write a bar chart of win rates (.png, .svg or .pdf)")
    parser.add_argument("--no-progress", action="store_true", help="print no progress on stderr")
    parser.add_argument("--replays", metavar="DIR",
                        help="write the games listed by --replay-games as replay files (DIR/game-N.json) for the "
                             "web app's Replay view (uno-env serve)")
    parser.add_argument("--replay-games", default="0-9", metavar="LIST",
                        help="which games --replays writes: numbers and ranges such as 0,5,10-12 (game i is deal "
                             "i // players in seat rotation i %% players; default 0-9)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``uno-env evaluate``; returns the exit status (2 for bad arguments, nothing played)."""
    args = build_parser().parse_args(argv)
    specs = expand_repeats(args.agents)
    players = args.players or (2 if args.round_robin else len(specs))
    try:
        for path in args.out:
            check_writable(path, REPORT_FORMATS, "--out")
        if args.plot:
            check_writable(args.plot, PLOT_FORMATS, "--plot")
        rules = Rules(edition=args.edition, num_players=players, **_rule_options(args.rule))
        replay_games = _check_replays(args, rules, len(specs)) if args.replays else []
        if args.workers > 1 and any(s.split(":")[0].strip() == "human" for s in specs):
            raise ValueError("a human agent needs --workers 1")
        result: MatchResult | RoundRobinResult
        if args.round_robin:
            result = round_robin(specs, rules, args.games, seed=args.seed, unit=args.unit, workers=args.workers,
                                 progress=not args.no_progress)
        else:
            result = evaluate(specs, rules, args.games, seed=args.seed, unit=args.unit, workers=args.workers,
                              progress=not args.no_progress)
    except (AgentSpecError, ValueError, TypeError) as err:
        print(f"uno-env evaluate: error: {err}", file=sys.stderr)
        return 2
    print(result.to_markdown(), end="", flush=True)
    try:
        for path in args.out:
            result.write(path)
        if args.plot:
            result.plot(args.plot)
        if replay_games:
            _write_replays(args, rules, specs, replay_games)
    except OSError as err:  # the disk filled or the folder went away while playing
        print(f"uno-env evaluate: error: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    return 0


def _check_replays(args: argparse.Namespace, rules: Rules, lineup: int) -> list[int]:
    """The games ``--replays`` writes, checked before anything is played; raises ValueError."""
    from .replays import parse_games

    if args.round_robin:
        raise ValueError("--replays writes games of one lineup: leave out --round-robin")
    games = parse_games(args.replay_games)
    played = max(1, -(-args.games // rules.num_players)) * rules.num_players
    if games[-1] >= played:
        raise ValueError(f"--replay-games: game {games[-1]} is not played (games are numbered 0..{played - 1})")
    folder = Path(args.replays)
    if not folder.is_dir():
        raise ValueError(f"--replays {args.replays}: not a directory")
    check_writable(str(folder / "game-0.json"), ["json"], "--replays")
    return games


def _write_replays(args: argparse.Namespace, rules: Rules, specs: Sequence[str], games: Sequence[int]) -> None:
    """Play the chosen games again with a recorder (same seeds, same games) and write their replays."""
    from agents.registry import make_agent

    from .replays import record_games

    lineup = [make_agent(s, allow_import=True, edition=rules.edition, num_players=rules.num_players) for s in specs]
    for number, _, replay in record_games(lineup, rules, games, seed=args.seed, unit=args.unit):
        replay.save(Path(args.replays) / f"game-{number}.json")
    print(f"wrote {len(games)} replay file(s) to {args.replays} (open them in `uno-env serve`, Replay)",
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
