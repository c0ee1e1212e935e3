"""The Gymnasium single-agent wrapper (uno_env.SingleAgentEnv)."""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from uno_env import SingleAgentEnv
from uno_env.core import EDITIONS, RulesError
from uno_env.observation import NUM_ACTIONS, observation_size, observe

sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")


def play_random(env: SingleAgentEnv, seed: int, rng: random.Random) -> tuple[list[float], dict, bool, bool]:
    """One episode with a uniformly random learner; returns its rewards and the last flags."""
    obs, info = env.reset(seed=seed)
    rewards = []
    while True:
        assert env.observation_space.contains(obs)
        action = rng.choice(np.flatnonzero(env.action_masks()).tolist())
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info, terminated, truncated


# ---------------------------------------------------------------- checkers
def test_gymnasium_env_checker_passes() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(SingleAgentEnv(num_players=3, episode="round"))
        check_env(SingleAgentEnv(edition=list(EDITIONS), num_players=[2, 4, 10], reward="score"))
    # Built directly, the env has no spec, so the checker cannot re-create it per render mode.
    unexpected = [str(w.message) for w in caught if "alternative render modes" not in str(w.message)]
    assert not unexpected


def test_gymnasium_make_and_render_modes_pass_the_checker(capsys: pytest.CaptureFixture[str]) -> None:
    env = gymnasium.make("uno_env.single_agent:uno_env/UnoSingleAgent-v0", num_players=3, render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert not caught, [str(w.message) for w in caught]
    _, info = env.reset(seed=1)
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"].astype(bool))
    text = env.render()
    assert isinstance(text, str) and "Your hand (seat" in text


def test_stable_baselines3_env_checker_passes() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_env_checker.check_env(SingleAgentEnv(num_players=4, episode="round"))
    assert not caught, [str(w.message) for w in caught]


# ---------------------------------------------------------------- spaces, masks, types
def test_spaces_fixed_by_max_players() -> None:
    env = SingleAgentEnv(edition=["classic", "angry_birds"], num_players=[2, 5])
    assert env.observation_space.shape == (observation_size(10),)
    assert env.action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    small = SingleAgentEnv(num_players=3, max_players=4)
    obs, _ = small.reset(seed=0)
    assert obs.shape == (observation_size(4),) == small.observation_space.shape


def test_observation_and_mask_are_the_learners() -> None:
    env = SingleAgentEnv(edition="monster_high", num_players=4, seat=2)
    obs, info = env.reset(seed=3)
    rng = random.Random(3)
    for _ in range(100):
        game = env.game
        assert env.seat == info["seat"] == 2 and game.current_player == 2
        assert np.array_equal(obs, observe(game, 2))
        legal = [int(a) for a in game.legal_actions()]
        assert np.flatnonzero(info["action_mask"]).tolist() == legal
        assert env.action_masks().dtype == bool and np.flatnonzero(env.action_masks()).tolist() == legal
        obs, reward, terminated, truncated, info = env.step(rng.choice(legal))
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
        if terminated or truncated:
            assert not info["action_mask"].any() and not env.action_masks().any()
            break


# ---------------------------------------------------------------- rewards
def test_learner_sees_its_losses() -> None:
    env = SingleAgentEnv(edition="monster_high", num_players=4, episode="round")
    rng = random.Random(0)
    outcomes = []
    for seed in range(12):
        rewards, _, terminated, _ = play_random(env, seed, rng)
        assert terminated
        assert all(r == 0 for r in rewards[:-1])
        game = env.game
        won = game.round_winner == env.seat
        assert rewards[-1] == (1.0 if won else -1.0 / 3)
        outcomes.append(won)
    assert outcomes.count(False) >= 6  # a random learner loses most 4-player rounds, and is told so


def test_rewards_credit_the_learner_seat_in_score_mode() -> None:
    env = SingleAgentEnv(edition="classic", num_players=3, episode="round", reward="score", seat=1)
    rng = random.Random(5)
    rewards, _, _, _ = play_random(env, 5, rng)
    game = env.game
    if game.round_winner == 1:
        expected = float(sum(game.hand_value(s) for s in range(3)))
    else:
        expected = -float(game.hand_value(1))
    assert sum(rewards) == expected and rewards[-1] == expected


def test_truncation_is_reported() -> None:
    env = SingleAgentEnv(num_players=2, max_turns=10)
    rng = random.Random(1)
    rewards, _, terminated, truncated = play_random(env, 1, rng)
    assert truncated and not terminated and rewards == [0.0] * len(rewards)


def test_truncation_reward_turns_a_cut_off_episode_into_an_outcome() -> None:
    env = SingleAgentEnv(num_players=2, max_turns=10, truncation_reward=-1.0)
    rng = random.Random(1)
    rewards, _, terminated, truncated = play_random(env, 1, rng)
    assert terminated and not truncated
    assert rewards[-1] == -1.0 and rewards[:-1] == [0.0] * (len(rewards) - 1)


def test_default_opponents_keep_an_untrained_learners_episodes_short() -> None:
    env = SingleAgentEnv(num_players=2, episode="round", seat=0)
    lengths = []
    for seed in range(40):
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps = 0
        while True:
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            steps += 1
            if terminated or truncated:
                break
        lengths.append(steps)
    assert np.mean(lengths) < 200  # measured 81 over 200 episodes (uniformly random opponents: about 900)


def test_default_opponent_never_draws_while_holding_a_playable_card() -> None:
    from uno_env.single_agent import _random_play_first

    rng = np.random.default_rng(0)
    assert {_random_play_first([3, 54, 55], rng) for _ in range(50)} == {3, 54}
    assert _random_play_first([55], rng) == 55
    assert {_random_play_first([57, 58, 59, 60], rng) for _ in range(80)} == {57, 58, 59, 60}


@pytest.mark.parametrize("bad", [55.0, "55", b"55", np.float32(55), 50.9, True, None, [55], np.array([55])])
def test_step_refuses_non_integer_actions_and_changes_nothing(bad: Any) -> None:
    from uno_env.core import IllegalActionError

    env = SingleAgentEnv(num_players=3, seat=0)
    obs, info = env.reset(seed=2)
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError):
        env.step(bad)
    assert env.game.to_dict() == before and np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    legal = int(np.flatnonzero(info["action_mask"])[0])
    for good in (np.int64(legal), np.array(legal), np.uint8(legal)):
        twin = SingleAgentEnv(num_players=3, seat=0)
        twin.reset(seed=2)
        twin.step(good)  # numpy integers (scalars and 0-d arrays) are actions
        assert twin.game.to_dict()["log"] != before["log"]


def test_info_keys_are_fixed() -> None:
    env = SingleAgentEnv(num_players=2, episode="round")
    _, info = env.reset(seed=0)
    keys = {tuple(sorted(info))}
    rng = random.Random(0)
    while True:
        _, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"]).tolist()))
        keys.add(tuple(sorted(info)))
        if terminated or truncated:
            break
    assert keys == {("action_mask", "illegal_action", "seat")}


def test_illegal_action_ends_the_episode_with_the_penalty() -> None:
    env = SingleAgentEnv(num_players=3, illegal_reward=-2.5)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-2.5, True, False, True)
    with pytest.raises(RuntimeError):
        env.step(0)
    env.reset(seed=1)
    _, reward, terminated, _, _ = env.step(NUM_ACTIONS + 3)
    assert terminated and reward == -2.5


def test_same_seed_same_episode() -> None:
    def trajectory() -> list[Any]:
        env = SingleAgentEnv(edition="angry_birds", num_players=4)
        obs, _ = env.reset(seed=11)
        out = [env.seat, obs.tobytes()]
        for _ in range(40):
            action = int(np.flatnonzero(env.action_masks())[0])
            obs, reward, terminated, truncated, _ = env.step(action)
            out += [obs.tobytes(), reward]
            if terminated or truncated:
                break
        return out

    assert trajectory() == trajectory()


# ---------------------------------------------------------------- seats, opponents, sampled options
def test_random_seat_varies_and_fixed_seat_holds() -> None:
    env = SingleAgentEnv(num_players=4)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1, 2, 3}
    fixed = SingleAgentEnv(num_players=4, seat=3)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(5)} == {3}
    with pytest.raises(ValueError):
        SingleAgentEnv(num_players=3, seat=3).reset(seed=0)


class FirstLegal:
    """A test opponent: records what it is shown, plays the first legal action."""

    needs_observation = True

    def __init__(self) -> None:
        self.calls: list[tuple[int, dict]] = []
        self.resets = 0
        self.seeds: list[int] = []

    def act(self, observation: dict, info: dict) -> int:
        self.calls.append((info["seat"], observation))
        assert info["my_turn"] and np.flatnonzero(observation["action_mask"]).tolist() == info["legal_action_ids"]
        assert observation["observation"].shape == (observation_size(10),)
        return info["legal_action_ids"][0]

    def reset(self) -> None:
        self.resets += 1

    def seed(self, seed: int) -> None:
        self.seeds.append(seed)


def test_opponent_objects_and_callables_act_on_their_own_seats() -> None:
    bot = FirstLegal()
    seen_by_callable: list[int] = []

    def policy(observation: dict, info: dict) -> int:
        seen_by_callable.append(info["seat"])
        return info["legal_action_ids"][-1]

    env = SingleAgentEnv(opponents=[bot, policy, bot], num_players=4, seat=1)
    env.reset(seed=2)
    for _ in range(60):
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated or truncated:
            break
    assert {seat for seat, _ in bot.calls} == {0, 3} and set(seen_by_callable) == {2}
    assert bot.resets == 1 and len(bot.seeds) == 1
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv(opponents=[bot], num_players=4).reset(seed=0)


def test_one_opponent_for_every_seat_and_mask_only_agents() -> None:
    class MaskOnly:
        needs_observation = False

        def act(self, observation: dict, info: dict) -> int:
            assert set(observation) == {"action_mask"}
            return int(np.flatnonzero(observation["action_mask"])[-1])

    env = SingleAgentEnv(opponents=MaskOnly(), num_players=3)
    env.reset(seed=4)
    for _ in range(30):
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated or truncated:
            break


def test_rule_options_sampled_per_episode() -> None:
    env = SingleAgentEnv(
        edition=list(EDITIONS), num_players=range(2, 6), target_score=lambda rng: int(rng.integers(50, 100)),
        episode="round",
    )
    seen = set()
    for seed in range(30):
        obs, _ = env.reset(seed=seed)
        rules = env.game.rules
        assert obs.shape == env.observation_space.shape and 50 <= rules.target_score < 100
        seen.add((rules.edition, rules.num_players))
    assert {e for e, _ in seen} == set(EDITIONS) and {n for _, n in seen} == {2, 3, 4, 5}


def test_invalid_options_raise() -> None:
    with pytest.raises(RulesError):
        SingleAgentEnv(edition="uno_flip")
    with pytest.raises(ValueError):
        SingleAgentEnv(seat="left")


def test_mask_in_observation_gives_each_observation_the_mask_of_its_own_position():
    """``uno_env.MaskInObservation``: ``{"obs", "mask"}`` as Tianshou reads a mask; the mask is the one the
    env's ``info`` gives for the same position, the vector is the env's own, and Gymnasium's checker passes."""
    import uno_env

    env = uno_env.MaskInObservation(gymnasium.make(uno_env.GYM_ID, num_players=3, max_players=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(uno_env.MaskInObservation(SingleAgentEnv(num_players=3, max_players=4)), skip_render_check=True)
    bare = SingleAgentEnv(num_players=3, max_players=4)
    obs, info = env.reset(seed=5)
    bare_obs, _ = bare.reset(seed=5)
    rng = random.Random(0)
    steps = 0
    while True:
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["obs"], bare_obs)
        np.testing.assert_array_equal(obs["mask"], info["action_mask"])
        legal = np.flatnonzero(obs["mask"])
        action = int(rng.choice(list(legal)))
        obs, reward, terminated, truncated, info = env.step(action)
        bare_obs, bare_reward, *_ = bare.step(action)
        assert reward == bare_reward
        steps += 1
        if terminated or truncated:
            break
    assert steps > 5 and not obs["mask"].any()  # over: no legal action


def test_mask_in_observation_needs_a_discrete_action_space():
    import uno_env

    with pytest.raises(TypeError, match="Discrete action space"):
        uno_env.MaskInObservation(_BoxActions())


class _BoxActions(gymnasium.Env):  # type: ignore[type-arg]
    """An env with continuous actions: no mask to give."""

    action_space = gymnasium.spaces.Box(0.0, 1.0, (2,))
    observation_space = gymnasium.spaces.Box(0.0, 1.0, (2,))
