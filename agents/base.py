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

Driving an agent at a seat of a core ``Game`` is one function, used by the tournament, the
terminal game and the web server alike: ``choose_action(agent, game)`` builds the seat's
``info`` (``game.view(seat)``) and observation dict (``agent_observation``: the mask, and the
vector sized for the agent's ``observation_players()`` only when it reads one), asks the
agent, and checks the answer is a legal action id before returning it::

    while not game.is_round_over:
        game.step(choose_action(agents[game.current_player], game))
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from uno_env.core.actions import NUM_ACTIONS
from uno_env.core.errors import IllegalActionError

if TYPE_CHECKING:
    from uno_env.core import Game


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

    def observation_players(self) -> int | None:
        """The ``max_players`` of the observation vector ``act`` reads, or None when it reads none.

        ``observation_max_players``, else an int attribute ``max_players``, else the encoder's
        default (10); a wrapper around another agent returns the wrapped agent's answer.
        """
        if not self.needs_observation:
            return None
        size = self.observation_max_players or getattr(self, "max_players", None)
        if size is None:
            from uno_env.observation import DEFAULT_MAX_PLAYERS

            return DEFAULT_MAX_PLAYERS
        return int(size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def legal_action_ids(observation: Mapping[str, Any] | None, info: Mapping[str, Any] | None) -> list[int]:
    """The legal action ids: ``info["legal_action_ids"]``, else the nonzero entries of the mask."""
    if info is not None and "legal_action_ids" in info:
        return list(info["legal_action_ids"])
    if observation is not None and "action_mask" in observation:
        return [int(i) for i in np.flatnonzero(np.asarray(observation["action_mask"]))]
    raise ValueError("an agent needs info['legal_action_ids'] or observation['action_mask']")


def action_mask(legal: Sequence[int]) -> np.ndarray:
    """The ``int8`` mask (one entry per action id, 1 = legal) of a list of legal action ids."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[list(legal)] = 1
    return mask


def agent_observation(agent: Agent, game: Game, seat: int, info: Mapping[str, Any]) -> dict[str, Any]:
    """The observation dict ``agent`` gets at ``seat``: ``action_mask``, plus ``observation`` (the
    vector of ``uno_env.observation.observe`` sized for ``agent.observation_players()``) when it reads one."""
    obs: dict[str, Any] = {"action_mask": action_mask(info["legal_action_ids"])}
    players = agent.observation_players()
    if players is not None:
        from uno_env.observation import observe

        obs["observation"] = observe(game, seat, players)
    return obs


def choose_action(agent: Agent, game: Game, seat: int | None = None) -> int:
    """Ask ``agent`` for its action at ``seat`` (default: the seat to act) and return it as a legal id.

    Raises ``IllegalActionError`` naming the agent when it answers anything but one of the
    seat's legal action ids (the game is unchanged: the caller steps it).
    """
    if seat is None:
        seat = game.current_player
        if seat is None:
            raise IllegalActionError("no seat is to act: the round is over")
    info = game.view(seat)
    action = agent.act(agent_observation(agent, game, seat, info), info)
    try:
        action_id = operator.index(action)
    except TypeError:
        raise IllegalActionError(f"{agent!r} at seat {seat} chose {action!r}, not an action id") from None
    if action_id not in info["legal_action_ids"]:
        raise IllegalActionError(f"{agent!r} at seat {seat} chose {action_id}, not one of the legal "
                                 f"{info['legal_action_ids']} ({', '.join(info['legal_actions'])})")
    return action_id
