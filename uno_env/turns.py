"""Seats that act in a fixed cycle, for learners that read one flat stream of transitions (Tianshou).

>>> import uno_env
>>> aec = uno_env.round_robin(uno_env.env(num_players=2, episode="round"))
>>> aec.reset(seed=0)
>>> first = aec.agent_selection
>>> aec.step(int(aec.observe(first)["action_mask"].argmax()))
>>> aec.agent_selection != first  # the other seat's turn, to act or to wait
True

UNO's turn order is not a cycle: one seat often decides several times in a row (draw, then
keep; a wild, then its color; UNO calls, catches, skips). A library that stores the table's
decisions as one stream, as Tianshou's ``PettingZooEnv`` with ``MultiAgentOffPolicyAlgorithm``
does, then gives a seat's transition the *next mover's* observation as ``obs_next``, and the
final reward and ``done`` land only on the last mover's transition: the other seats never see
their own result.

``round_robin(aec_env)`` makes the order a cycle: seat after seat in seat order, over the
seats still playing. A seat whose turn comes while another seat decides *waits*: its
observation is its own (what it may know now) with a mask whose only legal action is
``WAIT`` (id 70, ``no-catch``), and stepping ``WAIT`` changes nothing in the game. Any other
action from a waiting seat raises ``IllegalActionError`` and changes nothing. So among any
``N`` consecutive transitions of an ``N``-seat table each seat has exactly one, and an
``N``-step return (Tianshou's ``n_step=N``) runs from each seat's decision to its own next
one: it sums the seat's own rewards on the way and bootstraps from its own next observation.
The episode's last step carries every seat's final reward (``rewards``, which Tianshou's
``PettingZooEnv`` copies into its reward vector) and ``done``, and every seat's last
transition is within ``N`` steps of it, so each seat's last transition gets its own terminal
reward and stops there.

Rewards: a waiting step gives every agent 0; a deciding step gives what the env gave.
``last()`` returns what an agent received since its own previous step, as in PettingZoo.
Once the episode has ended, the terminated agents step ``None`` in the env's order, as PettingZoo
requires; ``pettingzoo.test.api_test`` passes (``tests/test_round_robin.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from .core.actions import NO_CATCH
from .core.errors import IllegalActionError
from .observation import NUM_ACTIONS
from .uno_v0 import action_id

__all__ = ["WAIT", "RoundRobin", "round_robin"]

WAIT = NO_CATCH
"""The one legal action of a seat that waits (``no-catch``: do nothing)."""

_WAIT_MASK = np.zeros(NUM_ACTIONS, np.int8)
_WAIT_MASK[WAIT] = 1
_WAIT_MASK.flags.writeable = False
_NO_MASK = np.zeros(NUM_ACTIONS, np.int8)
_NO_MASK.flags.writeable = False


class RoundRobin(BaseWrapper):  # type: ignore[misc]
    """A PettingZoo AEC wrapper in which the seats act in a fixed cycle (see the module docstring)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._order = list(env.possible_agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env; the env's first decider acts first."""
        self.env.reset(seed=seed, options=options)
        self.agent_selection = self.env.agent_selection
        self._sync({agent: 0.0 for agent in self.env.agents}, None)

    def _waits(self, agent: str) -> bool:
        """Whether ``agent`` has the turn while another, live seat decides in the env."""
        decider = self.env.agent_selection
        return (agent == self.agent_selection and agent != decider
                and not (self.env.terminations[decider] or self.env.truncations[decider]))

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's own observation; the mask allows ``WAIT`` alone while it waits."""
        obs: dict[str, np.ndarray] = self.env.observe(agent)
        if self._waits(agent):
            return {"observation": obs["observation"], "action_mask": _WAIT_MASK.copy()}
        if agent != self.agent_selection:
            return {"observation": obs["observation"], "action_mask": _NO_MASK.copy()}
        return obs

    def step(self, action: Any) -> None:
        """The selected agent's action: its decision, ``WAIT`` while it waits, ``None`` once it has finished."""
        agent = self.agent_selection
        if self._waits(agent):
            if action is None or action_id(action) != WAIT:
                raise IllegalActionError(
                    f"{agent} waits while {self.env.agent_selection} decides; its one legal action is "
                    f"WAIT ({WAIT}), got {action!r}")
            rewards = dict.fromkeys(self.env.agents, 0.0)
        else:
            self.env.step(action)
            rewards = dict(self.env.rewards)
        self._sync(rewards, agent)

    def _sync(self, rewards: dict[str, float], mover: str | None) -> None:
        """Copy the env's episode state after a step by ``mover`` and choose who has the turn."""
        env = self.env
        self.agents = list(env.agents)
        self.terminations = dict(env.terminations)
        self.truncations = dict(env.truncations)
        self.rewards = {agent: float(rewards.get(agent, 0.0)) for agent in self.agents}
        previous = getattr(self, "_cumulative_rewards", {}) if mover is not None else {}
        self._cumulative_rewards = {agent: (0.0 if agent == mover else previous.get(agent, 0.0))
                                    + self.rewards[agent] for agent in self.agents}
        if self.agents:
            decider = env.agent_selection
            if env.terminations[decider] or env.truncations[decider] or mover is None:
                self.agent_selection = decider  # a finished agent steps None in the env's order
            else:
                self.agent_selection = self._next_live(mover)
        self.infos = {agent: self._info(agent) for agent in self.agents}

    def _next_live(self, mover: str) -> str:
        """The live seat after ``mover`` in seat order."""
        start = self._order.index(mover)
        for k in range(1, len(self._order) + 1):
            agent = self._order[(start + k) % len(self._order)]
            if agent in self.env.agents and not (self.env.terminations[agent] or self.env.truncations[agent]):
                return str(agent)
        raise AssertionError("a live decider exists whenever the episode goes on")

    def _info(self, agent: str) -> dict[str, Any]:
        info: dict[str, Any] = self.env.infos[agent]
        if "action_mask" in info:  # infos="mask": the mask this wrapper gives
            return {**info, "action_mask": self.observe(agent)["action_mask"]}
        return info

    def __str__(self) -> str:
        return str(self.env)


def round_robin(aec_env: AECEnv) -> RoundRobin:
    """``aec_env`` (``uno_env.env(...)`` or ``raw_env``) with its seats acting in a fixed cycle."""
    return RoundRobin(aec_env)
