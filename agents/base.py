"""The one interface every agent implements: ``agent.act(observation, info) -> int``.

``observation`` is the environment's observation dict for the acting seat: at least
``action_mask`` (int8, one entry per action id, 1 = legal) and, for agents whose
``needs_observation`` is true, ``observation`` (the float32 vector of
``uno_env.observation.observe``, sized for ``observation_max_players`` seats). The
PettingZoo env always passes both. ``info`` is exactly ``game.view(seat)`` (documented in
``uno_env.core.view``): what that seat may know, including ``legal_action_ids``. An agent
returns one legal action id and uses nothing but these two arguments and its own memory.

The tournament harness (``agents.tournament``) gives every seat its own copy of an agent and
calls ``seed(s)`` then ``reset()`` before each game, so results depend only on the seeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np


class Agent:
    """Base class: override ``act``; ``reset`` and ``seed`` are optional."""

    name: ClassVar[str] = "agent"
    needs_observation: ClassVar[bool] = False  # whether act() reads observation["observation"]
    # With needs_observation, the ``max_players`` the vector is sized for (None: an int attribute
    # ``max_players`` if the agent has one, else the encoder's default, 10)
    observation_max_players: ClassVar[int | None] = None

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """Return one legal action id for the seat described by ``observation`` and ``info``."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything remembered from earlier games (called before each game)."""

    def seed(self, seed: int | None) -> None:
        """Reseed the agent's own random generator, if it has one."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def legal_action_ids(observation: Mapping[str, Any] | None, info: Mapping[str, Any] | None) -> list[int]:
    """The legal action ids: ``info["legal_action_ids"]``, else the nonzero entries of the mask."""
    if info is not None and "legal_action_ids" in info:
        return list(info["legal_action_ids"])
    if observation is not None and "action_mask" in observation:
        return [int(i) for i in np.flatnonzero(np.asarray(observation["action_mask"]))]
    raise ValueError("an agent needs info['legal_action_ids'] or observation['action_mask']")
