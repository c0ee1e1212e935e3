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
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.ppo_agent import write_checkpoint
from training.run.critic import critic_bounds, critic_size
from uno_env.observation import observation_bounds, observation_size

__all__ = ["PrivilegedCriticPolicy", "ScaledObservation", "SplitMlpExtractor", "export_policy", "policy_class",
           "policy_kwargs", "policy_tensors"]

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


class ScaledObservation(BaseFeaturesExtractor):
    """Flatten and scale each entry by ``1 / max(|low|, high)`` of the observation bounds.

    ``privileged=True``: the observation is the critic's (``training.run.critic``), the public
    vector followed by the hidden part.
    """

    def __init__(self, observation_space: spaces.Box, max_players: int = 10, privileged: bool = False) -> None:
        size = critic_size(max_players) if privileged else observation_size(max_players)
        if observation_space.shape != (size,):
            raise ValueError(f"observation space {observation_space.shape} is not max_players={max_players}'s ({size},)"
                             + (" with the privileged critic's part" if privileged else ""))
        super().__init__(observation_space, features_dim=size)
        self.obs_scale: torch.Tensor
        low, high = critic_bounds(max_players) if privileged else observation_bounds(max_players)
        scale = 1.0 / np.maximum(np.maximum(np.abs(low), np.abs(high)), 1e-6)
        self.register_buffer("obs_scale", torch.as_tensor(scale, dtype=torch.float32))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Scaled observations (already flat)."""
        return observations * self.obs_scale


class SplitMlpExtractor(nn.Module):
    """Actor and critic MLPs where the actor reads only the first ``public_size`` features."""

    def __init__(self, public_size: int, full_size: int, hidden: list[int], activation: type[nn.Module]) -> None:
        super().__init__()
        self.public_size = public_size

        def mlp(width: int) -> nn.Sequential:
            layers: list[nn.Module] = []
            for h in hidden:
                layers += [nn.Linear(width, h), activation()]
                width = h
            return nn.Sequential(*layers)

        self.policy_net = mlp(public_size)
        self.value_net = mlp(full_size)
        self.latent_dim_pi = self.latent_dim_vf = hidden[-1]

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both latents."""
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        """The policy's latent, from the public features only."""
        return self.policy_net(features[..., :self.public_size])  # type: ignore[no-any-return]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        """The value's latent, from every feature."""
        return self.value_net(features)  # type: ignore[no-any-return]


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with a critic that also reads the hidden part of the observation."""

    def __init__(self, *args: Any, max_players: int = 10, **kwargs: Any) -> None:
        self.max_players = max_players
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        net_arch: Any = self.net_arch  # policy_kwargs gives the dict form, {"pi": [...], "vf": [...]}
        # SB3 types the attribute as its own MlpExtractor; SplitMlpExtractor has the same interface.
        self.mlp_extractor = SplitMlpExtractor(  # type: ignore[assignment]
            observation_size(self.max_players), self.features_dim, list(net_arch["pi"]), self.activation_fn)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["max_players"] = self.max_players
        return data


def policy_kwargs(hidden: list[int], activation: str, max_players: int, privileged: bool = False) -> dict[str, Any]:
    """MaskablePPO ``policy_kwargs`` for separate actor and critic MLPs of the given shape."""
    kwargs: dict[str, Any] = {
        "net_arch": {"pi": list(hidden), "vf": list(hidden)},
        "activation_fn": ACTIVATIONS[activation],
        "features_extractor_class": ScaledObservation,
        "features_extractor_kwargs": {"max_players": max_players, "privileged": privileged},
    }
    if privileged:
        kwargs["max_players"] = max_players
    return kwargs


def policy_class(privileged: bool) -> Any:
    """The policy MaskablePPO builds: SB3's, or the privileged-critic one."""
    return PrivilegedCriticPolicy if privileged else "MlpPolicy"


def policy_tensors(policy: Any) -> dict[str, np.ndarray]:
    """The actor's tensors as numpy arrays, named as ``agents.ppo_agent`` expects."""
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    public = linears[0].in_features  # the actor reads the public vector only, also beside a privileged critic
    tensors = {"obs_scale": policy.features_extractor.obs_scale.detach().cpu().numpy()[:public]}
    for i, layer in enumerate(linears):
        tensors[f"hidden.{i}.weight"] = layer.weight.detach().cpu().numpy()
        tensors[f"hidden.{i}.bias"] = layer.bias.detach().cpu().numpy()
    tensors["action.weight"] = policy.action_net.weight.detach().cpu().numpy()
    tensors["action.bias"] = policy.action_net.bias.detach().cpu().numpy()
    return tensors


def load_actor(policy: Any, path: str | os.PathLike[str]) -> None:
    """Start ``policy``'s actor from a checkpoint's weights (the inverse of ``policy_tensors``);
    the critic is left as it is. Raises ``CheckpointError`` for a checkpoint of another shape."""
    from agents.ppo_agent import CheckpointError, read_checkpoint

    tensors, _ = read_checkpoint(path)
    ours = policy_tensors(policy)
    if set(tensors) != set(ours) or any(tensors[k].shape != ours[k].shape for k in ours):
        raise CheckpointError(f"{path}: its network ({sorted((k, v.shape) for k, v in tensors.items())}) is not "
                              f"this run's ({sorted((k, v.shape) for k, v in ours.items())})")
    if not np.allclose(tensors["obs_scale"], ours["obs_scale"]):
        raise CheckpointError(f"{path}: its observation scaling differs from this run's")
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for i, layer in enumerate(linears):
            layer.weight.copy_(torch.as_tensor(tensors[f"hidden.{i}.weight"]))
            layer.bias.copy_(torch.as_tensor(tensors[f"hidden.{i}.bias"]))
        policy.action_net.weight.copy_(torch.as_tensor(tensors["action.weight"]))
        policy.action_net.bias.copy_(torch.as_tensor(tensors["action.bias"]))


def export_policy(policy: Any, path: str | os.PathLike[str], metadata: dict[str, Any]) -> None:
    """Write ``policy``'s actor to ``path`` (safetensors + JSON metadata in its header)."""
    write_checkpoint(path, policy_tensors(policy), metadata)
