"""uno_env: UNO for reinforcement learning.

The rules engine is ``uno_env.core`` (pure Python). The RL adapters load on first use, so that
``import uno_env.core`` never imports PettingZoo, Gymnasium or torch:

* ``uno_env.env(**kwargs)`` / ``uno_env.raw_env(**kwargs)``: the PettingZoo AEC environment
  (``uno_env.uno_v0``, documented there), registered as ``uno_env/uno-v0`` for
  ``pettingzoo.make("aec", ...)``;
* ``uno_env.SingleAgentEnv``: a Gymnasium single-agent wrapper (``uno_env.single_agent``),
  registered as ``uno_env/UnoSingleAgent-v0`` for ``gymnasium.make``;
* ``uno_env.rllib_observations(aec_env)``: the env's observations keyed for Ray RLlib's
  action-masking RLModule (``uno_env.rllib``; Ray is not imported);
* ``uno_env.round_robin(aec_env)``: the seats act in a fixed cycle (a seat waits while another
  decides), so a learner that stores one stream of the table's transitions (Tianshou) gives
  every seat its own terminal reward (``uno_env.turns``);
* ``uno_env.observe(game, seat, max_players=10)`` / ``uno_env.action_mask(game, seat)``: the
  observation encoder (``uno_env.observation``, numpy only).

Registration is explicit, as PettingZoo and Gymnasium fill their registries only from imports
(neither discovers entry points): ``uno_env.register_envs()`` registers both ids (importing
both libraries), and is idempotent. ``import uno_env`` registers with whichever of the two is
already imported, so the usual order needs nothing more::

    import gymnasium as gym
    import uno_env

    env = gym.make("uno_env/UnoSingleAgent-v0")

Importing ``uno_env.uno_v0`` or ``uno_env.single_agent`` (or first use of ``uno_env.env``,
``uno_env.raw_env`` or ``uno_env.SingleAgentEnv``) registers both too.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__version__ = "0.1.0"

ENV_ID = "uno_env/uno-v0"
"""The PettingZoo AEC registry id (``pettingzoo.make("aec", ENV_ID)``)."""
GYM_ID = "uno_env/UnoSingleAgent-v0"
"""The Gymnasium registry id of ``SingleAgentEnv`` (``gymnasium.make(GYM_ID)``)."""

_LAZY = {
    "env": "uno_env.uno_v0",
    "raw_env": "uno_env.uno_v0",
    "observe": "uno_env.observation",
    "action_mask": "uno_env.observation",
    "OBSERVATION_VERSION": "uno_env.observation",
    "SingleAgentEnv": "uno_env.single_agent",
    "rllib_observations": "uno_env.rllib",
    "round_robin": "uno_env.turns",
}

__all__ = ["ENV_ID", "GYM_ID", "SingleAgentEnv", "action_mask", "env", "observe", "raw_env", "register_envs",
           "rllib_observations", "round_robin"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uno_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def register_envs() -> None:
    """Register ``uno_env/uno-v0`` with PettingZoo and ``uno_env/UnoSingleAgent-v0`` with Gymnasium.

    Imports both libraries; idempotent. A PettingZoo without a registry (before 1.27) is
    skipped: ``uno_env.env()`` works there all the same.
    """
    register_gymnasium()
    register_pettingzoo()


def register_gymnasium() -> None:
    """Register ``uno_env/UnoSingleAgent-v0`` in Gymnasium's registry (idempotent)."""
    import gymnasium

    if GYM_ID not in gymnasium.registry:
        gymnasium.register(GYM_ID, entry_point="uno_env.single_agent:SingleAgentEnv")


def register_pettingzoo() -> None:
    """Register ``uno_env/uno-v0`` in PettingZoo's AEC registry (idempotent; needs PettingZoo 1.27+)."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # PettingZoo before 1.27 has no registry
        return
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="uno_env.uno_v0:env")


# Register with the libraries already imported (looked up, never imported here).
if "gymnasium" in sys.modules:
    register_gymnasium()
if "pettingzoo" in sys.modules:
    register_pettingzoo()
