"""Tianshou as its docs show: ``PettingZooEnv`` + ``MultiAgentOffPolicyAlgorithm``, a DQN seat against random.

Run (``eco`` extra; ``pip install torch==2.13.0`` first)::

    python examples/ecosystem/tianshou_dqn.py --epochs 3

Tianshou's multi-agent recipe (its Tic-Tac-Toe tutorial): wrap the AEC env in ``PettingZooEnv``,
give each seat an algorithm, and let ``MultiAgentOffPolicyAlgorithm`` store the table's decisions
in one replay stream. UNO's turn order is not a cycle, so in that stream a seat's transitions
would not reach its own result; ``uno_env.round_robin`` makes the order a cycle (a seat *waits*
while another decides) and ``n_step_return_horizon=NUM_PLAYERS`` makes each seat's return run
from its decision to its own next one, so its last transition carries its own terminal reward
(``uno_env.turns`` explains why). Seat 0 learns with DQN; seat 1 is Tianshou's masked random
policy. The script prints seat 0's round win rate against it before and after training.

Not shown to learn: measured here (2 shared cores, load 6-7), 12,000 env steps (3 epochs of 4,000,
``cycles=16``, ``eps=0.2``) took 120 s and left the greedy seat drawing in 55% of the positions where
a card played (uniform random play: about half) and winning 0 of 40 rounds against random play
(400-decision cap). Measured again 2026-12-04 with the project's harness against uniform random
play (``agents.tournament.evaluate``, seats rotated, greedy DQN seat, 200 rounds): 8,000 env steps
(``--epochs 2 --max-turns 1000 --cycles 8 --hidden 128 --updates-per-step 0.5``, 89 s at load 4-5)
won 0 (47 rounds abandoned at 20,000 decisions); 16,000 (``--epochs 4 --max-turns 800 --cycles 16
--hidden 128 --eps 0.2 --lr 0.0005``, 291 s at load 5-6) won 2; 32,000 with a tanh network (``--epochs 8
--max-turns 1000 --cycles 8 --hidden 128 --updates-per-step 0.25``, 239 s at load 4-5) won 0 of 100
(62 abandoned at 1,000 decisions), its greedy choice being ``draw`` in 597 and ``keep`` in 184 of
2,104 positions where a card played. A greedy policy that draws (or
keeps) where a card plays never goes out against random play, and the Q-values of the 55 card
actions, each legal in few positions, stay too rough at this budget to rank them above ``draw``;
a policy-gradient learner pushes the one ``draw`` logit down from every decision, which is why the
PPO examples get further. ``tests/test_ecosystem_tianshou.py`` tests the mechanism (every seat's last
transition's n-step return is its own result) and that this script collects and trains.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch
from against_random import win_rate_against_random
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import uno_env

NUM_PLAYERS = 2
LEARNER = 0
"""The learner's seat (``player_0``); the other seat plays uniformly at random among legal actions."""


@dataclass
class Args:
    """The run's settings."""

    epochs: int = 3
    """Training epochs (each ``epoch_steps`` env steps, then an evaluation)."""
    epoch_steps: int = 4_000
    """Env steps (both seats' decisions and waits) per epoch."""
    envs: int = 4
    """Tables collected from in parallel (``DummyVectorEnv``)."""
    hidden: int = 64
    """Width of the Q-network's two hidden layers."""
    activation: str = "ReLU"
    """The hidden layers' activation (a ``torch.nn`` name)."""
    lr: float = 1e-3
    """Adam's learning rate."""
    gamma: float = 0.99
    """Discount per step of the stream (a seat's own decisions are ``NUM_PLAYERS`` steps apart)."""
    eps_start: float = 1.0
    """Epsilon-greedy exploration at the start of training (1: uniformly random legal actions)."""
    eps: float = 0.1
    """Epsilon-greedy exploration once ``eps_decay_steps`` env steps have been collected."""
    eps_decay_steps: int = 20_000
    """Env steps over which epsilon falls linearly from ``eps_start`` to ``eps``."""
    cycles: int = 4
    """Own decisions a return spans: ``n_step_return_horizon = cycles * NUM_PLAYERS`` stream steps."""
    buffer_size: int = 20_000
    """Transitions the replay buffer holds (all seats' rows of the stream)."""
    batch_size: int = 64
    """Minibatch size of each gradient step."""
    updates_per_step: float = 0.25
    """Gradient steps per collected env step."""
    target_update: int = 100
    """Gradient steps between copies of the Q-network into the target network."""
    max_turns: int = 400
    """Decisions per round before it is cut off (a truncated round is won by nobody)."""
    eval_rounds: int = 100
    """Rounds played greedily for each win-rate measurement."""
    seed: int = 0
    """Seeds torch, numpy's global generator (Tianshou's exploration draws from it) and the deals."""


def make_env(max_turns: int = 400) -> PettingZooEnv:
    """One table as Tianshou reads it: ``PettingZooEnv`` around the round-robin ``uno_env.env``."""
    return PettingZooEnv(uno_env.round_robin(
        uno_env.env(num_players=NUM_PLAYERS, max_players=NUM_PLAYERS, episode="round", max_turns=max_turns)))


class ScaledQNet(torch.nn.Module):
    """Tianshou's ``Net`` over the observation divided by its space's bound (counts reach 112)."""

    def __init__(self, env: PettingZooEnv, hidden: int, activation: str = "ReLU") -> None:
        super().__init__()
        space = env.observation_space["observation"]
        self.register_buffer("scale", torch.as_tensor(np.maximum(space.high, 1.0), dtype=torch.float32))
        self.net = Net(state_shape=space.shape, action_shape=env.action_space.n, hidden_sizes=[hidden, hidden],
                       activation=getattr(torch.nn, activation))

    def forward(self, obs: np.ndarray | torch.Tensor, state: object = None, info: object = None) -> tuple[torch.Tensor, object]:
        """Q-values of every action (and the unused recurrent state), as Tianshou's policies call a model."""
        return self.net(torch.as_tensor(obs, dtype=torch.float32) / self.scale, state=state, info=info)


def build_algorithm(args: Args) -> tuple[MultiAgentOffPolicyAlgorithm, DiscreteQLearningPolicy]:
    """DQN in the learner's seat, Tianshou's masked random policy in the other."""
    env = make_env(args.max_turns)
    net = ScaledQNet(env, args.hidden, args.activation)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps_start)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=args.gamma,
                  n_step_return_horizon=args.cycles * NUM_PLAYERS, target_update_freq=args.target_update)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [opponent] * NUM_PLAYERS
    seats[LEARNER] = learner
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env), policy


def win_rate(policy: DiscreteQLearningPolicy, rounds: int, seed: int) -> tuple[float, int, float, float]:
    """(won, played, Wilson low, high): the legal action of highest Q-value against uniform random play."""

    def scores(observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q, _ = policy.model(observation[None])
        return q[0].numpy()

    return win_rate_against_random(scores, games=rounds, seed=seed)


def train(args: Args) -> MultiAgentOffPolicyAlgorithm:
    """Train the learner's seat with Tianshou's off-policy trainer."""
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy and random policy use numpy's global generator
    algorithm, policy = build_algorithm(args)

    def set_eps(epoch: int, env_step: int) -> None:  # Tianshou's DQN examples schedule epsilon here
        policy.set_eps_training(args.eps_start + (args.eps - args.eps_start) * min(1.0, env_step / args.eps_decay_steps))

    train_envs = DummyVectorEnv([lambda: make_env(args.max_turns) for _ in range(args.envs)])
    train_envs.seed(args.seed)
    buffer = VectorReplayBuffer(args.buffer_size, args.envs)
    train_collector = Collector(algorithm, train_envs, buffer, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size * args.envs)
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, max_epochs=args.epochs, epoch_num_steps=args.epoch_steps,
        collection_step_num_env_steps=NUM_PLAYERS * args.envs * 8, batch_size=args.batch_size,
        update_step_num_gradient_steps_per_sample=args.updates_per_step, test_collector=None,
        training_fn=set_eps, verbose=False, show_progress=False))
    return algorithm


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    defaults = Args()
    for name, value in vars(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(parser.parse_args()))
    torch.set_num_threads(1)
    algorithm = train(args)
    policy = algorithm.get_algorithm(f"player_{LEARNER}").policy
    won, played, low, high = win_rate(policy, args.eval_rounds, seed=10_000)
    print(f"trained DQN seat: won {won:g} of {played} rounds against uniform random play (95% CI {low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
