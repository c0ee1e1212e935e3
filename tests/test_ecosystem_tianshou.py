"""Tianshou 2.x on the AEC env as its users would drive it: ``PettingZooEnv`` + a multi-agent algorithm.

A DQN learner in seat 0 against Tianshou's masked random policy at a 2-player table: a short
vectorised collect into a replay buffer (which stores every step's ``info``, so the env's infos
must keep fixed keys and shapes), then a few learning steps. Also Tianshou's PPO on the single-agent
env (``examples/ecosystem/tianshou_ppo.py``): where its mask must live, and a seeded run that learns to
beat uniform random play. Needs the ``eco`` extra; skipped, with the reason, where Tianshou is not installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

ts = pytest.importorskip("tianshou", reason="Tianshou is not installed (pip install -e '.[eco]')")
torch = pytest.importorskip("torch", reason="torch is not installed")

from helpers import load_example  # noqa: E402
from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Batch, Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402

import uno_env  # noqa: E402
from uno_env.core.actions import COLOR_BASE, DRAW, KEEP  # noqa: E402

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


def _play_first_dqns(env: PettingZooEnv, n_step: int, gamma: float) -> MultiAgentOffPolicyAlgorithm:
    """A DQN per seat whose Q-net prefers any card to every other action, so rounds end in ~150 decisions."""
    seats = []
    for _ in env.agents:
        net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
                  hidden_sizes=[16])
        last = [m for m in net.modules() if isinstance(m, torch.nn.Linear)][-1]
        with torch.no_grad():
            last.weight.zero_()
            last.bias.copy_(torch.linspace(1.0, 0.5, env.action_space.n) * (torch.arange(env.action_space.n) < 55))
        policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space)
        seats.append(DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=gamma,
                         n_step_return_horizon=n_step))
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def _last_own_returns(env_fn, n_step: int, gamma: float = 0.9) -> list[tuple[float, float, int]]:
    """(its n-step return, its final reward, steps from it to the end) of every seat's last transition of each
    finished round, from Tianshou's own return computation."""
    torch.manual_seed(0)
    np.random.seed(0)
    env = env_fn()
    algorithm = _play_first_dqns(env, n_step, gamma)
    envs = DummyVectorEnv([env_fn])
    envs.seed(0)
    buffer = VectorReplayBuffer(20_000, 1)
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    with policy_within_training_step(algorithm.policy):
        collector.collect(n_episode=2, reset_before_collect=True)
        data, indices = buffer.sample(0)
        order = np.argsort(indices)
        data, indices = data[order], indices[order]
        per_seat = algorithm._preprocess_batch(data, buffer, indices)
    found = []
    for end in np.flatnonzero(data.terminated):
        start = 0 if not np.any(data.done[:end]) else int(np.flatnonzero(data.done[:end]).max()) + 1
        for seat, agent in enumerate(env.agents):
            own = np.flatnonzero(data.obs.agent_id == agent)
            last = int(own[(own >= start) & (own <= end)].max())
            returns = per_seat[agent].returns.flatten()
            found.append((float(returns[int(np.flatnonzero(own == last)[0])]), float(data.rew[end][seat]), end - last))
    return found


def test_round_robin_and_n_step_give_every_seats_last_transition_its_own_terminal_reward() -> None:
    # The failure: with the table's decisions in one stream, only the last mover's transition
    # held the result. round_robin + n_step_return_horizon=N: every seat's last return is its own result.
    def env_fn() -> PettingZooEnv:
        return PettingZooEnv(uno_env.round_robin(uno_env.env(num_players=2, episode="round", max_players=2, max_turns=1_000)))

    found = _last_own_returns(env_fn, n_step=2)
    assert len(found) == 4  # two finished rounds, two seats each
    for value, final, distance in found:
        assert final in (1.0, -1.0) and distance in (0, 1)
        assert value == pytest.approx(0.9 ** distance * final, abs=1e-5)  # its own reward, no bootstrap after it


def test_without_round_robin_the_seat_that_did_not_move_last_misses_its_result() -> None:
    # The same collection on the env as it is (n_step=1, the setup): the check above fails there.
    def env_fn() -> PettingZooEnv:
        return PettingZooEnv(uno_env.env(num_players=2, episode="round", max_players=2, max_turns=1_000))

    found = _last_own_returns(env_fn, n_step=1)
    missed = [(value, final) for value, final, distance in found if distance > 0]
    assert missed and all(value != pytest.approx(final, abs=0.05) for value, final in missed)


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``examples/ecosystem/tianshou_dqn.py``, imported as a module."""
    return load_example("tianshou_dqn", monkeypatch)


def test_the_examples_training_opponent_plays_a_card_whenever_one_plays(example: Any) -> None:
    # Seat 1 while the DQN seat trains: uniformly among the legal card plays (ids 0-54) where there is
    # one, else uniformly among the legal actions (draw, keep, a color, WAIT...).
    np.random.seed(0)
    seat = example.CardsFirstRandom(action_space=example.make_env().action_space)
    mask = np.zeros((4, 80), bool)
    mask[0, [3, 54, DRAW]] = True  # two cards (a colored card, the special wild) or draw
    mask[1, [12, KEEP]] = True  # play the drawn card or keep it
    mask[2, DRAW] = True
    mask[3, COLOR_BASE:COLOR_BASE + 4] = True
    chosen = np.array([seat.policy(Batch(obs=Batch(mask=mask, obs=np.zeros((4, 1))), info=Batch())).act
                       for _ in range(400)])
    assert set(chosen[:, 0]) == {3, 54} and set(chosen[:, 1]) == {12} and set(chosen[:, 2]) == {DRAW}
    assert set(chosen[:, 3]) == set(range(COLOR_BASE, COLOR_BASE + 4))
    assert 150 < int(np.sum(chosen[:, 0] == 3)) < 250  # uniform between the two cards


def test_a_seats_policy_is_not_within_the_training_step_while_the_trainer_collects(example: Any) -> None:
    # Tianshou's trainer collects inside policy_within_training_step(algorithm.policy), but the
    # MultiAgentPolicy does not pass the flag to its seats' policies, so a seat's DQN policy explores
    # with eps_inference, not eps_training, while it collects: the example schedules both.
    args = example.Args(eps_start=1.0)
    algorithm, policy = example.build_algorithm(args)
    policy.set_eps_inference(0.0)
    envs = DummyVectorEnv([lambda: example.make_env(args.max_turns)])
    envs.seed(0)
    np.random.seed(0)
    buffer = VectorReplayBuffer(2_000, 1)
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    with policy_within_training_step(algorithm.policy):
        assert algorithm.policy.is_within_training_step and not policy.is_within_training_step
        collector.collect(n_step=600)
    data = buffer.sample(0)[0]
    own = (data.obs.agent_id == "player_0") & (data.obs.mask.sum(axis=1) > 1)  # the learner's real decisions
    with torch.no_grad():
        q = policy.model(data.obs.obs[own])[0].numpy()
    greedy = np.where(data.obs.mask[own].astype(bool), q, -np.inf).argmax(axis=1)
    assert own.sum() > 20 and np.array_equal(greedy, data.act[own].astype(int))  # eps_training 1: unused


def test_the_tianshou_example_trains_and_evaluates_with_round_robin(example: Any) -> None:
    torch.set_num_threads(1)
    args = example.Args(epochs=1, epoch_steps=256, envs=2, batch_size=32, max_turns=100, eps_decay_steps=256)
    torch.manual_seed(args.seed)  # train() seeds the same way before it builds: these are its initial weights
    _, policy = example.build_algorithm(args)
    initial = [p.detach().clone() for p in policy.model.parameters()]
    algorithm = example.train(args)
    trained = algorithm.get_algorithm("player_0").policy
    assert any(not torch.equal(w, p) for w, p in zip(initial, trained.model.parameters(), strict=True))
    assert args.eps < trained.eps_training < args.eps_start  # Tianshou called the epsilon schedule
    assert trained.eps_inference == trained.eps_training  # ...for the epsilon the seat collects with (below)
    won, played, low, high = example.win_rate(trained, rounds=2, seed=10_000)
    assert played == 2 and 0 <= won <= 2 and 0 <= low <= high <= 1


def test_a_truncated_rounds_last_obs_next_has_no_legal_action_so_dqns_bootstrap_there_is_below_every_q() -> None:
    # Why the example cuts rounds off only far away (max_turns 10,000): Tianshou bootstraps a truncated
    # (not terminated) transition from its obs_next, but after the cut-off no seat decides, so that
    # observation's mask is all zero, and DQN's masked maximum over it is lower than every Q-value of the
    # batch (compute_q_value subtracts max - min + 1 from every masked entry): a made-up value, not a state's.
    np.random.seed(0)

    def env_fn() -> PettingZooEnv:
        return PettingZooEnv(uno_env.round_robin(uno_env.env(num_players=2, episode="round", max_players=2, max_turns=30)))

    env = env_fn()
    seat = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[seat, seat], env=env)
    envs = DummyVectorEnv([env_fn])
    envs.seed(0)
    buffer = VectorReplayBuffer(1_000, 1)
    Collector(algorithm, envs, buffer).collect(n_episode=1, reset_before_collect=True)
    data = buffer.sample(0)[0]
    last = int(np.flatnonzero(data.done)[-1])
    assert data.truncated[last] and not data.terminated[last] and list(data.rew[last]) == [0.0, 0.0]
    assert not np.any(data.obs_next.mask[last])  # no legal action after the cut-off
    torch.manual_seed(0)
    policy = DiscreteQLearningPolicy(model=Net(state_shape=env.observation_space["observation"].shape,
                                               action_shape=env.action_space.n, hidden_sizes=[16]),
                                     action_space=env.action_space)
    q = policy(Batch(obs=data.obs_next[[0, last]], info=[None, None])).logits
    masked = policy.compute_q_value(q, data.obs_next.mask[[0, last]])
    assert masked[1].max() < q.min()  # the bootstrap value at the cut-off: below every Q-value of the batch


@pytest.fixture
def ppo_example(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``examples/ecosystem/tianshou_ppo.py``, imported as a module."""
    return load_example("tianshou_ppo", monkeypatch)


def test_a_buffer_rows_info_is_its_obs_nexts_so_the_ppo_example_keeps_the_mask_in_the_observation(
        ppo_example: Any) -> None:
    # Tianshou stores the info a step returned with that step's row: it describes obs_next. A mask kept
    # only in info would be the next position's when PPO recomputes log-probabilities; in the observation
    # (uno_env.MaskInObservation, Tianshou's obs.mask convention) it is the acting position's, and every action is legal there.
    torch.manual_seed(0)
    np.random.seed(0)
    algorithm, _actor = ppo_example.build(ppo_example.Args())
    envs = DummyVectorEnv([ppo_example.make_env for _ in range(2)])
    envs.seed(0)
    buffer = VectorReplayBuffer(1_000, 2)
    Collector(algorithm, envs, buffer).collect(n_step=600, reset_before_collect=True)
    data = buffer.sample(0)[0]
    acted = data.act.astype(int)
    assert all(mask[a] for mask, a in zip(data.obs.mask, acted, strict=True))
    assert np.array_equal(data.info.action_mask, data.obs_next.mask)
    assert not all(mask[a] for mask, a in zip(data.info.action_mask, acted, strict=True))


def test_the_tianshou_ppo_example_learns_in_a_seeded_short_run(ppo_example: Any) -> None:
    # The example's defaults (16 epochs of 4,096 env steps), seed 0, one torch thread. The bar is the
    # other ecosystem examples': the Wilson interval's low end above one half against uniform random play.
    torch.set_num_threads(1)
    args = ppo_example.Args(seed=0)
    won, played, low, _high = ppo_example.win_rate(ppo_example.train(args), rounds=100)
    assert played == 100
    assert low > 0.5, f"won {won:g} of {played}"
