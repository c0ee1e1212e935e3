"""The UNO env keyed for Ray RLlib's action-masking RLModule; Ray itself is never imported here.

>>> import uno_env
>>> from uno_env.rllib import rllib_observations
>>> aec = rllib_observations(uno_env.env(num_players=2, episode="round"))
>>> aec.reset(seed=0)
>>> sorted(aec.observe(aec.agent_selection))
['action_mask', 'observations']

RLlib's documented way to mask actions is its example module
``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``, which
reads observations ``{"observations": ..., "action_mask": ...}``; PettingZoo's classic envs, ours
included, say ``observation``. ``rllib_observations(aec_env)`` renames the key and gives the mask
as float32 (what the module adds to its logits' log), so with RLlib's own wrapper::

    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    env = PettingZooEnv(rllib_observations(uno_env.env(num_players=2)))

is the whole env an RLlib user needs for seat-based multi-agent training
(``examples/ecosystem/rllib_action_masking.py`` trains, checkpoints and resumes with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from .observation import NUM_ACTIONS
from .uno_v0 import BoundAttributes

__all__ = ["RLlibObservations", "rllib_observation", "rllib_observations", "rllib_space"]


def rllib_space(space: spaces.Dict) -> spaces.Dict:
    """The env's observation space keyed for RLlib: ``observations`` (the vector), ``action_mask`` (float32)."""
    return spaces.Dict({"observations": space["observation"],
                        "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})


def rllib_observation(obs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One observation of the env keyed for RLlib (see ``rllib_space``)."""
    return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


class RLlibObservations(BoundAttributes, BaseWrapper):  # type: ignore[misc]
    """A PettingZoo wrapper whose observations are ``rllib_observation`` of the env's."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._spaces = {agent: rllib_space(env.observation_space(agent)) for agent in env.possible_agents}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The keyed Dict space (the same object for every call)."""
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``rllib_observation`` of the wrapped env's observation."""
        return rllib_observation(self.env.observe(agent))

    def __str__(self) -> str:
        return str(self.env)


def rllib_observations(aec_env: AECEnv) -> RLlibObservations:
    """``aec_env`` (``uno_env.env(...)`` or ``raw_env``) with observations keyed for RLlib's masking RLModule."""
    return RLlibObservations(aec_env)
