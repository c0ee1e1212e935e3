"""Tianshou 2.x on the AEC env as its users would drive it: ``PettingZooEnv`` + a multi-agent algorithm.

A DQN learner in seat 0 against Tianshou's masked random policy at a 2-player table: a short
vectorised collect into a replay buffer (which stores every step's ``info``, so the env's infos
must keep fixed keys and shapes), then a few learning steps. Needs the ``eco`` extra; skipped,
with the reason, where Tianshou is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

ts = pytest.importorskip("tianshou", reason="Tianshou is not installed (pip install -e '.[eco]')")
torch = pytest.importorskip("torch", reason="torch is not installed")

from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402

import uno_env  # noqa: E402

pytestmark = pytest.mark.slow


def make_env() -> PettingZooEnv:
    return PettingZooEnv(uno_env.env(num_players=2, episode="round", max_turns=300, max_players=2))


def test_tianshou_collects_and_learns_against_a_random_policy() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = make_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[64])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=20)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    envs = DummyVectorEnv([make_env for _ in range(2)])
    envs.seed(0)
    buffer = VectorReplayBuffer(4_000, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    stats = collector.collect(n_step=1_000, reset_before_collect=True)
    assert stats.n_collected_steps >= 1_000 and stats.n_collected_episodes >= 1
    # Every stored step is a legal move: the masks reached the policies.
    data = buffer.sample(0)[0]
    acted = data.act.astype(int)
    assert all(mask[a] for mask, a in zip(data.obs.mask, acted, strict=True))

    before = [p.detach().clone() for p in net.parameters()]
    with policy_within_training_step(algorithm.policy):
        for _ in range(5):
            result = algorithm.update(buffer, sample_size=64)
    losses = result.get_loss_stats_dict()
    assert losses and all(np.isfinite(v) for v in losses.values())
    assert any(not torch.equal(b, p) for b, p in zip(before, net.parameters(), strict=True))
