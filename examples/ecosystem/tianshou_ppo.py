"""Tianshou's PPO on the single-agent env, the mask in the observation: a seat that learns to beat random play.

Run (``eco`` extra; ``pip install torch==2.13.0`` first)::

    python examples/ecosystem/tianshou_ppo.py

Tianshou's single-agent recipe: ``gymnasium.make("uno_env/UnoSingleAgent-v0")`` tables in a
``DummyVectorEnv``, a ``DiscreteActorPolicy`` over Tianshou's ``Net``, its ``DiscreteCritic``, ``PPO``
and the on-policy trainer. The learner's opponent is the env's default (random legal play that plays
a card when one plays). Tianshou reads an action mask from the observation (``obs.mask``, as its
``PettingZooEnv`` gives it and as its DQN policy's docstring asks), not from ``info``: a buffer row's
``info`` is the one the step returned, which belongs to ``obs_next``, so a mask kept only in ``info``
would be the next position's when PPO recomputes its log-probabilities. ``uno_env.MaskInObservation``
therefore gives the observation as ``{"obs", "mask"}``.

Measured (docs/ecosystem.md): the defaults (65,536 env steps) won 85, 84 and 97 of 100 rounds
against uniformly random legal play in seeds 0, 1 and 2 (the project's harness, ``against_random.py``).
The multi-agent DQN seat of ``tianshou_dqn.py`` is still not shown to learn.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from against_random import win_rate_against_random
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OnPolicyTrainerParams
from tianshou.utils.net.common import ActionReprNet, Net
from tianshou.utils.net.discrete import DiscreteCritic

import uno_env


@dataclass
class Args:
    """The run's settings."""

    epochs: int = 16
    """Training epochs of ``epoch_steps`` env steps each."""
    epoch_steps: int = 4_096
    """Env steps (the learner's decisions) per epoch."""
    collect: int = 1_024
    """Env steps collected before each PPO update (over all tables)."""
    envs: int = 8
    """Tables collected from in parallel (``DummyVectorEnv``)."""
    hidden: int = 64
    """Width of the actor's and the critic's two hidden (Tanh) layers."""
    lr: float = 1e-3
    """Adam's learning rate."""
    repetitions: int = 4
    """PPO passes over each collected batch."""
    batch_size: int = 128
    """Minibatch size."""
    max_turns: int = 1_000
    """Decisions per training round before it is cut off."""
    eval_rounds: int = 100
    """Rounds of the win-rate measurement."""
    seed: int = 0
    """Seeds torch, numpy's global generator and the tables."""


def make_env(max_turns: int = 1_000) -> uno_env.MaskInObservation:
    """One 2-player table, the learner against the env's default opponent, the mask in the observation."""
    return uno_env.MaskInObservation(gym.make(uno_env.GYM_ID, num_players=2, max_players=2, episode="round", max_turns=max_turns))


def _scale(space: gym.spaces.Box) -> torch.Tensor:
    return torch.as_tensor(np.maximum(space.high, 1.0), dtype=torch.float32)


class MaskedActor(ActionReprNet):  # type: ignore[type-arg]
    """Tianshou's ``Net`` over the observation divided by its bound; illegal actions' logits set to -1e9."""

    def __init__(self, space: gym.spaces.Box, actions: int, hidden: int) -> None:
        super().__init__()
        self.register_buffer("scale", _scale(space))
        self.net = Net(state_shape=space.shape, action_shape=actions, hidden_sizes=[hidden, hidden],
                       activation=torch.nn.Tanh)

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        """Logits (masked where the observation holds a mask) and the unused recurrent state."""
        vector, mask = (obs.obs, obs.mask) if hasattr(obs, "obs") else (obs, None)
        logits, _ = self.net(torch.as_tensor(vector, dtype=torch.float32) / self.scale)
        if mask is not None:
            logits = logits.masked_fill(~torch.as_tensor(np.asarray(mask), dtype=torch.bool), -1e9)
        return logits, state


class ScaledNet(torch.nn.Module):
    """The critic's body: Tianshou's ``Net`` over the observation vector divided by its bound."""

    def __init__(self, space: gym.spaces.Box, hidden: int) -> None:
        super().__init__()
        self.register_buffer("scale", _scale(space))
        self.net = Net(state_shape=space.shape, hidden_sizes=[hidden, hidden], activation=torch.nn.Tanh)

    def get_output_dim(self) -> int:
        """What ``DiscreteCritic`` reads to size its head."""
        return int(self.net.get_output_dim())

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        vector = obs.obs if hasattr(obs, "obs") else obs
        return self.net(torch.as_tensor(vector, dtype=torch.float32) / self.scale)  # type: ignore[no-any-return]


def build(args: Args) -> tuple[PPO, MaskedActor]:
    """Tianshou's PPO with the masked actor and a critic of the same shape."""
    env = make_env(args.max_turns)
    space = env.observation_space["obs"]
    actor = MaskedActor(space, int(env.action_space.n), args.hidden)  # type: ignore[attr-defined]
    critic = DiscreteCritic(preprocess_net=ScaledNet(space, args.hidden))
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space, deterministic_eval=True)
    return PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=args.lr), max_grad_norm=1.0), actor


def train(args: Args) -> MaskedActor:
    """Train with Tianshou's on-policy trainer; returns the actor."""
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    algorithm, actor = build(args)
    envs = DummyVectorEnv([lambda: make_env(args.max_turns) for _ in range(args.envs)])
    envs.seed(args.seed)
    collector = Collector(algorithm, envs, VectorReplayBuffer(args.collect, args.envs))
    collector.reset()
    algorithm.run_training(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=args.epochs, epoch_num_steps=args.epoch_steps,
        collection_step_num_env_steps=args.collect, update_step_num_repetitions=args.repetitions,
        batch_size=args.batch_size, test_collector=None, verbose=False, show_progress=False))
    envs.close()
    return actor


def win_rate(actor: MaskedActor, rounds: int, seed: int = 10_000) -> tuple[float, int, float, float]:
    """(won, played, Wilson low, high): the legal action of highest logit against uniform random play."""

    def scores(observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return actor(observation[None])[0][0].numpy()

    return win_rate_against_random(scores, games=rounds, seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    for name, value in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(parser.parse_args()))
    torch.set_num_threads(1)
    won, played, low, high = win_rate(train(args), args.eval_rounds)
    print(f"trained PPO seat: won {won:g} of {played} rounds against uniform random play (95% CI {low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
