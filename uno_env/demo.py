"""Random-play demo: prints one whole game, event by event (``python -m uno_env.demo``)."""

from __future__ import annotations

import argparse
import random

from uno_env.core import EDITIONS, Game, Rules


def play_first_choice(game: Game, rng: random.Random) -> int:
    """A random player that plays a card whenever it can and draws only when it cannot."""
    legal = game.legal_actions()
    plays = [a for a in legal if str(a).startswith("play ")]
    return rng.choice(plays) if plays else rng.choice(legal)


def main(argv: list[str] | None = None) -> None:
    """Play and print one game between random players."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edition", default="classic", choices=sorted(EDITIONS))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=int, default=500)
    args = parser.parse_args(argv)
    game = Game(Rules(edition=args.edition, num_players=args.players, target_score=args.target), seed=args.seed)
    rng = random.Random(args.seed)
    print(f"{game.edition.title}, {args.players} players, seed {args.seed}")
    while not game.is_game_over:
        if game.is_round_over:
            print(f"  round {game.round_number}: seat {game.round_winner} went out; scores {game.scores}")
            game.next_round()
            continue
        seat = game.current_player
        action = play_first_choice(game, rng)
        before = len(game.log)
        game.step(action)
        drawn = sum(1 for e in game.log[before:] if e[0] == "draw")
        extra = f" (cards drawn: {drawn})" if drawn else ""
        if game.round_number <= 1:
            print(f"  seat {seat}: {action}{extra}")
    print(f"  round {game.round_number}: seat {game.round_winner} went out; scores {game.scores}")
    print(f"winner(s): {game.winners} after {game.round_number} rounds")


if __name__ == "__main__":
    main()
