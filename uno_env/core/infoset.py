"""Full games sampled from one seat's view: the determinizations a search agent plays out.

``sample_game(view, rng)`` takes nothing but ``game.view(seat)`` and returns a ``Game`` that
the seat cannot tell apart from the real one: ``sample_game(v, rng).view(seat) == v``.
``InfoSet(view)`` parses the view once and samples many games from it (``InfoSet.sample``),
which is what a search agent calls in its inner loop. Both are the one determinizer of
``uno_env.core.determinize`` (whose docstring says what is kept, sampled and derived), with
the sampled state wrapped in a ``Game``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from . import determinize
from .game import Game

__all__ = ["InfoSet", "sample_game"]


class InfoSet(determinize.InfoSet):
    """One seat's knowledge, parsed from its view; ``sample(rng)`` deals the hidden cards into a ``Game``."""

    def sample(self, rng: random.Random) -> Game:
        """A full game consistent with the view, hidden cards dealt uniformly by ``rng``."""
        return Game.from_state(self.sample_state(rng), check=False)


def sample_game(view: Mapping[str, Any], rng: random.Random | int | None = None) -> Game:
    """A full ``Game`` consistent with ``view`` (a ``game.view(seat)``); see the module docstring."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    return InfoSet(view).sample(rng)
