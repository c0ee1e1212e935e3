"""``uno-env watch``: watch AI agents play one game, told event by event.

::

    uno-env watch                                             # four rule agents, classic, to 500 points
    uno-env watch --agents ppo rule random --edition angry_birds --seed 3 --rounds 1
    uno-env watch --agents ppo*4 --seat 0                     # only what seat 0 may know

Agents are specs (``agents.registry``, as in ``uno-env evaluate``; ``ppo`` plays the shipped
checkpoint for the table), driven by ``agents.choose_action``; events are told by
``uno_env.render.Narrator``, as in ``uno-env play``: by default as an onlooker who sees every
card, with ``--seat N`` as seat N sees the game. The same ``--seed`` gives the same game.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from agents import Agent, choose_action
from agents.registry import agent_label, expand_repeats, make_agent
from agents.tournament import DEFAULT_MAX_DECISIONS
from uno_env.core import EDITIONS, Game, Rules
from uno_env.render import Narrator

from .terminal import make_console, styled

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``uno-env watch`` argument parser."""
    parser = argparse.ArgumentParser(prog="uno-env watch",
                                     description="Watch AI agents play one game of UNO, told event by event.")
    parser.add_argument("--agents", nargs="+", default=None, metavar="SPEC",
                        help="one agent spec per seat (NAME*K repeats; default rule at every seat)")
    parser.add_argument("--players", type=int, default=None,
                        help="table size, 2-10 (default: the number of agents, or 4 for one spec)")
    parser.add_argument("--edition", default="classic", choices=list(EDITIONS), help="which deck (default classic)")
    parser.add_argument("--seed", type=int, default=0, help="the game's seed (default 0)")
    parser.add_argument("--target", type=int, default=500, help="target score (default 500)")
    parser.add_argument("--rounds", type=int, default=None, metavar="N", help="stop after N rounds (default: the game)")
    parser.add_argument("--seat", type=int, default=None, metavar="N",
                        help="tell the game as seat N sees it (default: an onlooker who sees every card)")
    parser.add_argument("--delay", type=float, default=0.0, metavar="SECONDS", help="pause after each line")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colors (also: NO_COLOR=1)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``uno-env watch``; returns the exit status (2 for bad options)."""
    args = build_parser().parse_args(argv)
    console = make_console(args.no_color)
    specs = expand_repeats(args.agents or [])
    players = args.players or (len(specs) if len(specs) > 1 else 4)
    specs = specs or ["rule"]
    if len(specs) == 1:
        specs *= players
    try:
        if len(specs) != players:
            raise ValueError(f"--agents needs 1 or {players} specs for {players} players, got {len(specs)}")
        if args.rounds is not None and args.rounds < 1:
            raise ValueError(f"--rounds must be at least 1, got {args.rounds}")
        game = Game(Rules(edition=args.edition, num_players=players, target_score=args.target), seed=args.seed)
        if args.seat is not None and not 0 <= args.seat < players:
            raise ValueError(f"--seat must be 0..{players - 1}, got {args.seat}")
        agents: list[Agent] = []
        labels: list[str] = []
        seeder = random.Random(args.seed)
        for spec in specs:
            agent = make_agent(spec, allow_import=True, edition=args.edition, num_players=players)
            agent.seed(seeder.getrandbits(63))
            agent.reset()
            agents.append(agent)
            labels.append(agent_label(spec, agent))
    except ValueError as err:
        print(f"uno-env watch: error: {err}", file=sys.stderr)
        return 2
    narrator = Narrator(game.edition, args.seat)
    console.print(f"{game.edition.title}, {players} players, seed {args.seed}: "
                  + ", ".join(f"player {s} {label}" for s, label in enumerate(labels)))
    shown = 0

    def tell() -> None:
        nonlocal shown
        for _, line in narrator.tell_game(game, shown):
            console.print(styled(line, game.edition))
            if args.delay > 0:
                time.sleep(args.delay)
        shown = game.log_length

    try:
        tell()
        while True:
            decisions = 0
            while not game.is_round_over and decisions < DEFAULT_MAX_DECISIONS:
                seat = game.current_player
                assert seat is not None
                game.step(choose_action(agents[seat], game, seat))
                decisions += 1
                tell()
            if not game.is_round_over:
                console.print(f"Round {game.round_number} stopped after {decisions} decisions.")
                return 0
            console.print(f"Scores after round {game.round_number}: "
                          + ", ".join(f"player {s} {p}" for s, p in enumerate(game.scores)))
            if game.is_game_over or (args.rounds is not None and game.round_number >= args.rounds):
                return 0
            game.next_round()
            tell()
    except KeyboardInterrupt:
        print("\nInterrupted.", flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
