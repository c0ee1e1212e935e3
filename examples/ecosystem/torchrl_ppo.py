"""TorchRL as its PPO tutorial shows, on ``GymEnv("uno_env/UnoSingleAgent-v0")`` with the action mask.

Run (``eco`` extra; ``pip install torch==2.13.0`` first)::

    python examples/ecosystem/torchrl_ppo.py --batches 64

``import uno_env`` registers the Gymnasium id (also when Gymnasium is imported later, as TorchRL
does inside ``GymEnv``). The single-agent env puts the legal actions in ``info["action_mask"]``;
TorchRL reads it with ``set_info_dict_reader(default_info_dict_reader(["action_mask"]))``, its
``ActionMask`` transform masks the action spec with it, and the policy samples from a
``MaskedOneHotCategorical``. The rest is TorchRL's PPO recipe: ``Collector``, ``GAE``,
``ClipPPOLoss`` over minibatches of a ``ReplayBuffer``. The learner trains against the env's
default opponent (random legal play as RLCard's random agent plays: a uniformly chosen playable
card when one plays, ``draw`` only when none does), whose rounds end within a few dozen learner
steps. Against uniformly random legal play (``agents.RandomAgent(uniform=True)``), which draws
as often as it plays, most training rounds ran into ``max_turns`` and ended with no reward, and a
seed whose first batches saw too few finished rounds never started to learn. The script prints
the round win rate of the policy's most likely legal action against uniformly random legal play
after training, with its 95% Wilson interval (``against_random.py``).

Learns in every seed tried (docs/ecosystem.md has the figures); ``tests/test_ecosystem_torchrl.py``
runs it short (collects legal actions only, updates the actor, scores it) and checks that a
seeded short run learns.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch
from against_random import win_rate_against_random
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.collectors import Collector
from torchrl.data import Binary, LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import ActionMask, ExplorationType, GymEnv, SerialEnv, TransformedEnv, set_exploration_type
from torchrl.envs.gym_like import default_info_dict_reader
from torchrl.modules import MaskedOneHotCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import uno_env

NUM_ACTIONS = 80


@dataclass
class Args:
    """The run's settings."""

    batches: int = 64
    """Collected batches (each ``frames_per_batch`` learner steps, then PPO epochs)."""
    frames_per_batch: int = 1_024
    """Learner steps per batch (over all envs)."""
    envs: int = 8
    """Tables collected from in turn (``SerialEnv``), so that each batch spans several rounds."""
    epochs: int = 4
    """PPO epochs per batch."""
    minibatch: int = 128
    """Minibatch size."""
    hidden: int = 64
    """Width of the actor's and the critic's two hidden layers."""
    lr: float = 1e-3
    """Adam's learning rate."""
    max_turns: int = 1_000
    """Decisions per training round before it is cut off (random play's rounds run to thousands)."""
    eval_rounds: int = 200
    """Rounds of the win-rate measurement."""
    seed: int = 0
    """Seeds torch and the env."""


def make_env(seed: int = 0, max_turns: int = 1_000) -> TransformedEnv:
    """``GymEnv`` by registry id, the mask read from the infos and applied to the action spec."""
    base = GymEnv(uno_env.GYM_ID, num_players=2, max_players=2, episode="round", max_turns=max_turns)
    base.set_info_dict_reader(default_info_dict_reader(
        ["action_mask"], spec={"action_mask": Binary(NUM_ACTIONS, dtype=torch.int8)}))
    env = TransformedEnv(base, ActionMask())
    env.set_seed(seed)
    return env


class Scaled(torch.nn.Module):
    """An MLP over the observation divided by its space's bound (counts reach 112)."""

    def __init__(self, scale: torch.Tensor, outputs: int, hidden: int) -> None:
        super().__init__()
        self.register_buffer("scale", scale)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(scale.numel(), hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, outputs))

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        """The network's output for a batch of observations."""
        return self.mlp(observation / self.scale)


def build(env: TransformedEnv, hidden: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """The masked-categorical actor and the critic, as TorchRL's PPO tutorial builds them."""
    high = env.observation_spec["observation"].space.high
    scale = torch.clamp(torch.as_tensor(high, dtype=torch.float32), min=1.0)
    logits = TensorDictModule(Scaled(scale, NUM_ACTIONS, hidden), in_keys=["observation"], out_keys=["logits"])
    # The info reader keeps the env's int8 mask; the masked distribution wants booleans.
    as_bool = TensorDictModule(torch.Tensor.bool, in_keys=["action_mask"], out_keys=["legal"])
    actor = ProbabilisticActor(TensorDictSequential(as_bool, logits), in_keys={"logits": "logits", "mask": "legal"},
                               distribution_class=MaskedOneHotCategorical, spec=env.action_spec,
                               return_log_prob=True)
    critic = ValueOperator(Scaled(scale, 1, hidden), in_keys=["observation"])
    return actor, critic


def win_rate(actor: ProbabilisticActor, rounds: int, seed: int) -> tuple[float, int, float, float]:
    """(won, played, Wilson low, high): the actor's most likely legal action against uniform random play."""

    def scores(observation: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        state = TensorDict({"observation": torch.as_tensor(observation), "action_mask": torch.as_tensor(mask)})
        with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
            return actor(state)["action"]  # one-hot of the mode of the masked distribution

    return win_rate_against_random(scores, games=rounds, seed=seed)


def train(actor: ProbabilisticActor, critic: ValueOperator, args: Args) -> list[float]:
    """TorchRL's PPO loop; the mean reward of each collected batch."""
    env = SerialEnv(args.envs, lambda: make_env(0, args.max_turns))
    env.set_seed(args.seed)
    collector = Collector(env, actor, frames_per_batch=args.frames_per_batch,
                                  total_frames=args.frames_per_batch * args.batches,
                          auto_register_policy_transforms=False)
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    buffer = ReplayBuffer(storage=LazyTensorStorage(args.frames_per_batch), sampler=SamplerWithoutReplacement())
    rewards = []
    for batch in collector:
        rewards.append(float(batch["next", "reward"].mean()))
        for _ in range(args.epochs):
            with torch.no_grad():
                advantage(batch)
            buffer.extend(batch.reshape(-1))
            for _ in range(args.frames_per_batch // args.minibatch):
                losses = loss(buffer.sample(args.minibatch))
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optim.step()
    collector.shutdown()
    return rewards


def run(args: Args) -> tuple[float, int, float, float]:
    """Seed, build, train and score (one torch thread): ``win_rate`` of the trained actor."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    actor, critic = build(make_env(args.seed), args.hidden)
    train(actor, critic, args)
    return win_rate(actor, args.eval_rounds, seed=10_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    defaults = Args()
    for name, value in vars(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    won, played, low, high = run(Args(**vars(parser.parse_args())))
    print(f"trained policy: won {won:g} of {played} rounds against uniform random play (95% CI {low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
