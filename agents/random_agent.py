"""RandomAgent: the seeded random baseline.

Two policies, both uniform draws from the agent's own ``random.Random``:

* default (``uniform=False``), as RLCard's random agent plays UNO so results compare with the
  literature: in the play phase it plays a uniformly chosen playable card when it holds
  one and draws only when it holds none; every other decision (play or keep a drawn card,
  the color after a wild, the Urrrhhh color, challenge or accept, call UNO or not, catch or
  not) is uniform over the legal actions. "Playable" includes a Wild Draw Four played as a
  bluff where the rules allow one.
* ``uniform=True``: uniform over every legal action at every decision (so it also draws
  while holding playable cards, and calls UNO or catches only half the time).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from uno_env.core.actions import DRAW, NUM_PLAY_ACTIONS

from .base import Agent, legal_action_ids


class RandomAgent(Agent):
    """Uniformly random legal actions; by default a playable card is preferred to drawing."""

    name = "random"

    def __init__(self, seed: int | None = None, uniform: bool = False) -> None:
        self.uniform = uniform
        self._seed = seed
        self._rng = random.Random(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the generator from ``seed``."""
        self._seed = seed
        self._rng = random.Random(seed)

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """A uniformly chosen legal action (a playable card before ``draw`` unless ``uniform``)."""
        legal = legal_action_ids(observation, info)
        if not self.uniform and DRAW in legal:
            plays = [a for a in legal if a < NUM_PLAY_ACTIONS]
            if plays:
                return self._rng.choice(plays)
        return self._rng.choice(legal)

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self._seed!r}, uniform={self.uniform})"
