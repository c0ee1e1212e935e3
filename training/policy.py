"""The torch side of the network: input scaling for SB3 and export to the shareable format.

``ScaledObservation`` multiplies the observation by ``1 / high`` of the encoder's bounds, so
every input lies in [-1, 1] (hand sizes and pile sizes reach 112); the same factors are
saved as the checkpoint's ``obs_scale`` so numpy play (``agents.PPOAgent``) computes the
same function. ``export_policy`` writes the actor (scaling, hidden layers, action logits)
in the format of ``agents.ppo_agent``; the value network is not needed to play.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.ppo_agent import write_checkpoint
from uno_env.observation import observation_bounds, observation_size

__all__ = ["ScaledObservation", "export_policy", "policy_kwargs", "policy_tensors"]

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


class ScaledObservation(BaseFeaturesExtractor):
    """Flatten and scale each entry by ``1 / max(|low|, high)`` of the observation bounds."""

    def __init__(self, observation_space: spaces.Box, max_players: int = 10) -> None:
        size = observation_size(max_players)
        if observation_space.shape != (size,):
            raise ValueError(f"observation space {observation_space.shape} is not max_players={max_players}'s ({size},)")
        super().__init__(observation_space, features_dim=size)
        low, high = observation_bounds(max_players)
        scale = 1.0 / np.maximum(np.maximum(np.abs(low), np.abs(high)), 1e-6)
        self.register_buffer("obs_scale", torch.as_tensor(scale, dtype=torch.float32))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Scaled observations (already flat)."""
        return observations * self.obs_scale


def policy_kwargs(hidden: list[int], activation: str, max_players: int) -> dict[str, Any]:
    """MaskablePPO ``policy_kwargs`` for separate actor and critic MLPs of the given shape."""
    return {
        "net_arch": {"pi": list(hidden), "vf": list(hidden)},
        "activation_fn": ACTIVATIONS[activation],
        "features_extractor_class": ScaledObservation,
        "features_extractor_kwargs": {"max_players": max_players},
    }


def policy_tensors(policy: Any) -> dict[str, np.ndarray]:
    """The actor's tensors as numpy arrays, named as ``agents.ppo_agent`` expects."""
    tensors = {"obs_scale": policy.features_extractor.obs_scale.detach().cpu().numpy()}
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    for i, layer in enumerate(linears):
        tensors[f"hidden.{i}.weight"] = layer.weight.detach().cpu().numpy()
        tensors[f"hidden.{i}.bias"] = layer.bias.detach().cpu().numpy()
    tensors["action.weight"] = policy.action_net.weight.detach().cpu().numpy()
    tensors["action.bias"] = policy.action_net.bias.detach().cpu().numpy()
    return tensors


def export_policy(policy: Any, path: str | os.PathLike[str], metadata: dict[str, Any]) -> None:
    """Write ``policy``'s actor to ``path`` (safetensors + JSON metadata in its header)."""
    write_checkpoint(path, policy_tensors(policy), metadata)
