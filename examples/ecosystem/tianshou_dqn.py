"""Tianshou as its docs show: ``PettingZooEnv`` + ``MultiAgentOffPolicyAlgorithm``, a DQN seat against random.

Run (``eco`` extra; ``pip install torch==2.13.0`` first)::

    python examples/ecosystem/tianshou_dqn.py --epochs 2

Tianshou's multi-agent recipe (its Tic-Tac-Toe tutorial): wrap the AEC env in ``PettingZooEnv``,
give each seat an algorithm, and let ``MultiAgentOffPolicyAlgorithm`` store the table's decisions
in one replay stream. UNO's turn order is not a cycle, so in that stream a seat's transitions
would not reach its own result; ``uno_env.round_robin`` makes the order a cycle (a seat *waits*
while another decides) and an ``n_step_return_horizon`` that is a multiple of ``NUM_PLAYERS`` makes
each seat's return run from its decision to one of its own later ones, so its last transition carries its own terminal reward
(``uno_env.turns`` explains why). Seat 0 learns with DQN; seat 1, while it trains, is
``CardsFirstRandom``: Tianshou's masked random seat, except that it plays a card whenever one plays
(uniformly among the legal card plays, action ids 0-54), so rounds end (a round of uniformly random
play lasts about 1,600 decisions). The script prints the trained seat's round win rate against
uniformly random legal play (``against_random.py``: the project's harness, seats rotated, rounds
abandoned after 1,000 decisions count as not won).

The defaults avoid two traps of earlier settings (``max_turns=400``, ``gamma=0.99``): a round
cut off at ``max_turns`` gives both seats 0 and, once cut off, no seat decides, so the bootstrap
observation's mask is all zero and DQN's masked maximum there is below every Q-value of the batch
(``tests/test_ecosystem_tianshou.py``); and with a cut-off worth 0 against a loss worth -1 and a
discount per step, a loss is worth ``-gamma**k`` (k steps away), more the later it comes and most
when the round is cut off, so a losing seat gains by drawing to drag the round out. So ``max_turns`` is the
env's default 10,000 (a cut-off is rare), ``gamma=1``, and epsilon falls from 1 (uniformly random
legal play) to 0.05 over 100,000 env steps (Tianshou's ``training_fn``, as its DQN examples do),
set as both ``eps_training`` and ``eps_inference``: ``MultiAgentPolicy`` does not mark its seats'
policies as within the training step while the trainer collects, so a seat explores with its
``eps_inference`` there (tested; before 2026-12-04 this script set only ``eps_training``, so its
seat collected greedily).

**Not shown to learn**, also against the cards-first opponent; docs/ecosystem.md has the measured
figures. Its rounds finish (170-440 in 40,000-120,000 env steps), but the DQN seat wins 4-6 in
100 of them (about what uniformly random play wins against a cards-first seat), so nearly every
return is -1, the Q-values of ``draw`` and of the best legal card differ by 0.04-0.08 on average,
and the greedy seat still prefers ``draw`` to every legal card in a fifth
to a third of the positions where a card plays and ``keep`` to a playable drawn card in 40-65%: it
won 1-4 of 100 rounds against uniformly random play. ``tests/test_ecosystem_tianshou.py`` tests the
mechanism (every seat's last transition's n-step return is its own result), the opponent, the
exploration, and that this script collects, schedules epsilon and trains. Sixteen more short runs
(weaker training opponents, faster epsilon schedules, more updates, returns over 2-64 own
decisions, a dueling head; docs/ecosystem.md) won 0-24 of 100. Tianshou's PPO on the single-agent
env does learn: ``tianshou_ppo.py``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from against_random import win_rate_against_random
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.data.batch import BatchProtocol
from tianshou.data.types import ActBatchProtocol, ObsBatchProtocol
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import uno_env
from uno_env.core.actions import NUM_PLAY_ACTIONS

NUM_PLAYERS = 2
LEARNER = 0
"""The learner's seat (``player_0``); the other seat is ``CardsFirstRandom`` while it trains."""


class CardsFirstRandom(MARLRandomDiscreteMaskedOffPolicyAlgorithm):
    """Tianshou's masked random seat, but it plays a card whenever one plays.

    Action ids below ``NUM_PLAY_ACTIONS`` (0-54) play a card; where one of them is legal it picks
    uniformly among those, otherwise uniformly among the legal actions (``draw``, ``keep``, the
    color after a wild, a round-robin ``WAIT``...). It learns nothing.
    """

    class Policy(MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy):
        """The action rule, over a batch of masked observations."""

        def forward(self, batch: ObsBatchProtocol, state: dict | BatchProtocol | np.ndarray | None = None,
                    **kwargs: dict) -> ActBatchProtocol:
            """A uniformly random legal card play where one is legal, else a uniformly random legal action."""
            legal = np.array(batch.obs.mask, dtype=bool)  # type: ignore[attr-defined]
            plays = legal[:, :NUM_PLAY_ACTIONS].any(axis=1)
            legal[plays, NUM_PLAY_ACTIONS:] = False
            logits = np.random.rand(*legal.shape)  # numpy's global generator, as Tianshou's random seat
            logits[~legal] = -np.inf
            return cast(ActBatchProtocol, Batch(act=logits.argmax(axis=-1)))


@dataclass
class Args:
    """The run's settings."""

    epochs: int = 8
    """Training epochs of ``epoch_steps`` env steps each."""
    epoch_steps: int = 20_000
    """Env steps (both seats' decisions and waits) per epoch."""
    envs: int = 32
    """Tables collected from in parallel (``DummyVectorEnv``)."""
    hidden: int = 128
    """Width of the Q-network's two hidden layers."""
    activation: str = "Tanh"
    """The hidden layers' activation (a ``torch.nn`` name)."""
    lr: float = 5e-4
    """Adam's learning rate."""
    gamma: float = 1.0
    """Discount per step of the stream (a seat's own decisions are ``NUM_PLAYERS`` steps apart)."""
    eps_start: float = 1.0
    """Epsilon-greedy exploration at the start of training (1: uniformly random legal actions)."""
    eps: float = 0.05
    """Epsilon-greedy exploration once ``eps_decay_steps`` env steps have been collected."""
    eps_decay_steps: int = 100_000
    """Env steps over which epsilon falls linearly from ``eps_start`` to ``eps``."""
    cycles: int = 16
    """Own decisions a return spans: ``n_step_return_horizon = cycles * NUM_PLAYERS`` stream steps."""
    buffer_size: int = 200_000
    """Transitions the replay buffer holds (all seats' rows of the stream)."""
    batch_size: int = 256
    """Minibatch size of each gradient step."""
    updates_per_step: float = 0.05
    """Gradient steps per collected env step."""
    target_update: int = 200
    """Gradient steps between copies of the Q-network into the target network."""
    max_turns: int = 10_000
    """Decisions per round before it is cut off (a truncated round is won by nobody; see the docstring)."""
    eval_rounds: int = 100
    """Rounds of the win-rate measurement."""
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
    """DQN in the learner's seat, ``CardsFirstRandom`` in the other."""
    env = make_env(args.max_turns)
    net = ScaledQNet(env, args.hidden, args.activation)
    # MultiAgentPolicy marks only itself, not its seats' policies, as within a training step while the
    # trainer collects, so a seat's DQN policy explores with its eps_inference there (tested); train()
    # schedules both. The score reads the Q-values directly (win_rate), with no exploration.
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps_start,
                                     eps_inference=args.eps_start)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=args.gamma,
                  n_step_return_horizon=args.cycles * NUM_PLAYERS, target_update_freq=args.target_update)
    opponent = CardsFirstRandom(action_space=env.action_space)
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
        eps = args.eps_start + (args.eps - args.eps_start) * min(1.0, env_step / args.eps_decay_steps)
        policy.set_eps_training(eps)
        policy.set_eps_inference(eps)  # what the seat explores with while collecting: see build_algorithm

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
