"""Small generic helpers for scenario tests: stacked games, action scripts, positions."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from uno_env.core import Game, Rules, stacked_deck


def stacked_game(
    edition: str = "classic",
    num_players: int = 4,
    dealer: int = 0,
    hands: dict[int, list[str]] | None = None,
    start: list[str] | None = None,
    then: list[str] | None = None,
    **options: Any,
) -> Game:
    """A game dealt from ``stacked_deck`` (hands, first card(s), next draws); ``options`` go to Rules."""
    rules = Rules(edition=edition, num_players=num_players, **options)
    deck = stacked_deck(edition, num_players, dealer, hands=hands, start=start, then=then)
    return Game(rules, deck=deck, dealer=dealer)


def play(game: Game, actions: Iterable[str | int]) -> Game:
    """Apply actions (texts like ``play R7``, ``color blue``, or ids) in order; returns the game."""
    for action in actions:
        game.step(action)
    return game


def event_types(game: Game, start: int = 0) -> list[str]:
    """The types of the game's events from index ``start`` on."""
    return [e["type"] for e in game.events()[start:]]


def edited(game: Game, **changes: Any) -> Game:
    """A game rebuilt by ``Game.from_dict`` from ``game.to_dict()`` with top-level keys replaced."""
    data = game.to_dict()
    data.update(changes)
    return Game.from_dict(data)


def play_out_round(game: Game, seed: int = 0, max_steps: int = 20_000) -> Game:
    """Take seeded random legal actions until the round (or game) is over; returns the game."""
    rng = random.Random(seed)
    for _ in range(max_steps):
        if game.is_round_over:
            return game
        game.step(rng.choice(game.legal_actions()))
    raise AssertionError(f"round not over after {max_steps} steps")
