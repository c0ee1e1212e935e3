"""The batched trainer's networks: the actor and critic MLPs (sparse first layers on a CPU), their
export to the checkpoint format's tensors, and the masked action sampling."""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from training.run.config import TrainConfig
from training.run.critic import critic_bounds
from uno_env.core.actions import NUM_ACTIONS
from uno_env.observation import observation_bounds

SPARSE_SHARE = 0.25  # a first layer's input with at most this share of non-zero entries is read as sparse
MASKED = -1e9  # an illegal action's logit: finite, so the softmax and entropy stay NaN-free
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


# ====================================================================== the networks
def input_scale(low: np.ndarray, high: np.ndarray) -> torch.Tensor:
    """``1 / max(|low|, |high|)`` per entry: every scaled input lies in [-1, 1] (``training.sb3.policy``'s scaling)."""
    return torch.as_tensor(1.0 / np.maximum(np.maximum(np.abs(low), np.abs(high)), 1e-6), dtype=torch.float32)


class Mlp(nn.Module):
    """Scale the input entrywise, hidden layers with an activation, a linear head (orthogonal init as SB3's)."""

    def __init__(self, scale: torch.Tensor, hidden: Sequence[int], outputs: int, activation: str,
                 head_gain: float) -> None:
        super().__init__()
        self.scale: torch.Tensor
        self.register_buffer("scale", scale.clone())
        layers: list[nn.Module] = []
        width = scale.numel()
        for h in hidden:
            layer = nn.Linear(width, h)
            nn.init.orthogonal_(layer.weight, math.sqrt(2))
            nn.init.zeros_(layer.bias)
            layers += [layer, ACTIVATIONS[activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, outputs)
        nn.init.orthogonal_(self.head.weight, head_gain)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The head's outputs (float32, also under a bfloat16 autocast) for a batch of raw inputs.

        On a CPU the first layer reads its input as sparse (``sparse_linear``): the same function."""
        first, *rest = self.body
        hidden = sparse_linear(first, x, self.scale)  # type: ignore[arg-type]
        for layer in rest:
            hidden = layer(hidden)
        return self.head(hidden).float()  # type: ignore[no-any-return]

    def linears(self) -> list[nn.Linear]:
        """The hidden layers, then the head."""
        return [m for m in self.body if isinstance(m, nn.Linear)] + [self.head]


def sparse_linear(layer: nn.Linear, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """``layer(x * scale)`` computed from ``x``'s non-zero entries: per row, the sum of the weight columns they
    select, each times its scaled value (``embedding_bag``). An observation has about 4% non-zero entries, so on a CPU this
    is faster than the dense product, forward and backward, for the same function (measured: ``docs/speed.md``). Dense inputs
    (more than ``SPARSE_SHARE`` non-zero) and other devices use the dense product."""
    if x.device.type != "cpu" or x.shape[0] == 0 or int(torch.count_nonzero(x)) > SPARSE_SHARE * x.numel():
        return layer(x * scale)  # type: ignore[no-any-return]
    rows, cols = x.nonzero(as_tuple=True)
    counts = torch.bincount(rows, minlength=x.shape[0])
    offsets = torch.cat([counts.new_zeros(1), counts.cumsum(0)[:-1]])
    return torch.nn.functional.embedding_bag(cols, _columns(layer.weight), offsets, mode="sum",
                                             per_sample_weights=x[rows, cols] * scale[cols]) + layer.bias


_TRANSPOSED: dict[int, tuple[weakref.ref[torch.Tensor], int, torch.Tensor]] = {}  # id(weight) -> (it, its version, its transpose)


def _columns(weight: torch.Tensor) -> torch.Tensor:
    """``weight.t()`` as a contiguous tensor; without autograd, kept until the weight changes (a rollout
    makes hundreds of forward passes with the same weights). An entry is used only for the very tensor it
    was made from: a new network's weight may get a dead one's ``id`` and version number."""
    if torch.is_grad_enabled() and weight.requires_grad:
        return weight.t().contiguous()
    cached = _TRANSPOSED.get(id(weight))
    if cached is None or cached[0]() is not weight or cached[1] != weight._version \
            or cached[2].shape != weight.t().shape:
        if len(_TRANSPOSED) > 256:  # weights of networks long gone
            _TRANSPOSED.clear()
        cached = _TRANSPOSED[id(weight)] = (weakref.ref(weight), weight._version, weight.detach().t().contiguous())
    return cached[2]


class Actor(Mlp):
    """The policy: public observation -> 80 action logits (exactly ``agents.PPOAgent``'s network).

    ``oracle`` (``batched.oracle_steps``): the input is the public observation followed by the hidden cards
    (the privileged critic's vector), which the rollout keeps at a falling rate and then zeroes;
    ``fair_actor`` is the network it plays with them zeroed, the one exported."""

    def __init__(self, max_players: int, hidden: Sequence[int], activation: str, oracle: bool = False) -> None:
        bounds = critic_bounds(max_players) if oracle else observation_bounds(max_players)
        super().__init__(input_scale(*bounds), hidden, NUM_ACTIONS, activation, 0.01)
        self.max_players, self.hidden, self.activation, self.oracle = max_players, list(hidden), activation, oracle
        self.public_size = observation_bounds(max_players)[0].size


def fair_actor(actor: Actor) -> Actor:
    """What an oracle-guided ``actor`` computes with the hidden cards zeroed, as an actor of the public observation
    alone (its first layer's public columns; every other weight shared by value); ``actor`` itself if it is not one."""
    if not actor.oracle:
        return actor
    fair = Actor(actor.max_players, actor.hidden, actor.activation).to(actor.scale.device)
    first, *rest = actor.linears()
    fair_first, *fair_rest = fair.linears()
    with torch.no_grad():
        fair.scale.copy_(actor.scale[:actor.public_size])
        fair_first.weight.copy_(first.weight[:, :actor.public_size])
        fair_first.bias.copy_(first.bias)
        for mine, theirs in zip(fair_rest, rest, strict=True):
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
    return fair


class Critic(Mlp):
    """The value: the public observation, then (privileged) the hidden cards -> one value."""

    def __init__(self, max_players: int, hidden: Sequence[int], activation: str, privileged: bool) -> None:
        bounds = critic_bounds(max_players) if privileged else observation_bounds(max_players)
        super().__init__(input_scale(*bounds), hidden, 1, activation, 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B,) values."""
        return super().forward(x)[:, 0]


class ActorCritic(nn.Module):
    """The learner's two networks and their Adam (``optimizer``, the attribute ``training.run.resume`` reads)."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        p, e = config.ppo, config.env
        self.actor = Actor(e.max_players, p.hidden, p.activation, oracle=config.batched.oracle_steps > 0)
        self.critic = Critic(e.max_players, p.hidden, p.activation, p.privileged_critic)
        self.optimizer: torch.optim.Optimizer = torch.optim.Adam(self.parameters(), lr=p.learning_rate, eps=1e-5)


def actor_tensors(actor: Actor) -> dict[str, np.ndarray]:
    """The actor in the checkpoint layout of ``agents.ppo_agent`` (``obs_scale``, ``hidden.<i>.*``, ``action.*``);
    an oracle-guided one as its ``fair_actor``."""
    actor = fair_actor(actor)
    *hidden, head = actor.linears()
    tensors = {"obs_scale": actor.scale.detach().cpu().numpy()}
    for i, layer in enumerate(hidden):
        tensors[f"hidden.{i}.weight"] = layer.weight.detach().cpu().numpy()
        tensors[f"hidden.{i}.bias"] = layer.bias.detach().cpu().numpy()
    tensors["action.weight"] = head.weight.detach().cpu().numpy()
    tensors["action.bias"] = head.bias.detach().cpu().numpy()
    return tensors


def actor_from_tensors(tensors: dict[str, np.ndarray], metadata: dict[str, Any], device: torch.device) -> Actor:
    """An ``Actor`` holding a checkpoint's tensors (``agents.ppo_agent.read_checkpoint``'s output)."""
    actor = Actor(int(metadata["max_players"]), [int(h) for h in metadata["hidden"]], metadata["activation"])
    load_actor_tensors(actor, tensors)
    return actor.to(device)


def load_actor_tensors(actor: Actor, tensors: dict[str, np.ndarray]) -> None:
    """Copy checkpoint tensors into ``actor`` (the same shapes; ``obs_scale`` included). An oracle-guided actor
    takes them in its public columns and gets zero weights on the hidden cards', so it starts as the checkpoint."""
    *hidden, head = actor.linears()
    n = actor.public_size
    with torch.no_grad():
        actor.scale[:n].copy_(torch.as_tensor(tensors["obs_scale"]))
        for i, layer in enumerate(hidden):
            if i == 0 and actor.oracle:
                layer.weight[:, n:].zero_()
            layer.weight[:, :n if i == 0 else None].copy_(torch.as_tensor(tensors[f"hidden.{i}.weight"]))
            layer.bias.copy_(torch.as_tensor(tensors[f"hidden.{i}.bias"]))
        head.weight.copy_(torch.as_tensor(tensors["action.weight"]))
        head.bias.copy_(torch.as_tensor(tensors["action.bias"]))


def matmul_precision(config: TrainConfig, device: torch.device) -> Any:
    """The autocast context of ``batched.precision`` (a no-op for float32)."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=config.batched.precision == "bfloat16")


def sample_actions(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None,
                   deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``(actions, log_probs)`` from the masked softmax: argmax, or a Gumbel-max draw from ``generator``."""
    masked = logits.masked_fill(~mask, MASKED)
    log_probs = torch.log_softmax(masked, dim=1)
    if deterministic:
        actions = masked.argmax(1)
    else:
        uniform = torch.rand(masked.shape, generator=generator, device=masked.device).clamp_(1e-20, 1.0)
        actions = (masked - torch.log(-torch.log(uniform))).argmax(1)
    return actions, log_probs.gather(1, actions[:, None])[:, 0]


