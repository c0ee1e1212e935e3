"""The PettingZoo AEC environment (uno_env.uno_v0): API, registry, rewards, infos, rendering, pickling."""

from __future__ import annotations

import copy
import importlib.abc
import pickle
import random
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

import uno_env
from tests.helpers import position
from uno_env.core import EDITIONS, Game, IllegalActionError, Rules, RulesError
from uno_env.observation import NUM_ACTIONS, observation_size, observe, split_observation
from uno_env.uno_v0 import DEFAULT_MAX_TURNS, raw_env

TABLES = (2, 3, 4, 10)
MATRIX = [(ed, n, ep) for ed in EDITIONS for n in TABLES for ep in ("game", "round")]
MATRIX_IDS = [f"{ed}-{n}-{ep}" for ed, n, ep in MATRIX]

# PettingZoo's api_test names the classic envs whose Dict observations it expects; any other
# env with the standard {"observation", "action_mask"} dict gets these two notes.
# PettingZoo's registry (pettingzoo.make) exists from 1.27; older versions, which the project
# supports, have none to register with.
HAS_PETTINGZOO_REGISTRY = hasattr(pettingzoo, "make")

EXPECTED_NOTES = ("Observation is not a NumPy array", "Observation space for each agent probably should be")


def quietly(check: Callable[[], Any]) -> None:
    """Run a PettingZoo check, failing on any warning but the two expected notes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check()
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_NOTES)]
    assert not unexpected, unexpected


def kwargs_for(edition: str, n: int, episode: str) -> dict[str, Any]:
    # Small targets keep games short; round episodes are truncated early so api_test sees ends.
    extra = {"max_turns": 150} if episode == "round" else {}
    return {"edition": edition, "num_players": n, "episode": episode, "target_score": 30, **extra}


def random_action(env: Any, agent: str, rng: random.Random) -> int | None:
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        return None
    return rng.choice(np.flatnonzero(obs["action_mask"]).tolist())


def run_episode(env: Any, seed: int, rng_seed: int = 0, options: dict | None = None) -> dict[str, Any]:
    """Play random legal actions to the end; return each agent's final last() and summed rewards."""
    rng = random.Random(rng_seed)
    env.reset(seed=seed, options=options)
    final: dict[str, float] = {}
    total = dict.fromkeys(env.agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            final[agent] = reward
            assert not obs["action_mask"].any()
            env.step(None)
        else:
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return {"final": final, "total": total, "game": env.unwrapped.game}


# ---------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize(("edition", "n", "episode"), MATRIX, ids=MATRIX_IDS)
def test_pettingzoo_api_seed_render_and_pickle(edition: str, n: int, episode: str) -> None:
    kwargs = kwargs_for(edition, n, episode)
    quietly(lambda: api_test(uno_env.env(**kwargs), num_cycles=40))
    quietly(lambda: seed_test(lambda: uno_env.env(**kwargs), num_cycles=20))
    quietly(lambda: render_test(lambda render_mode=None: uno_env.env(render_mode=render_mode, **kwargs)))
    # Pickle round trip mid-episode: the copy goes on exactly like the original.
    env = uno_env.env(**kwargs)
    rng = random.Random(n)
    env.reset(seed=n)
    for _ in range(15):
        env.step(random_action(env, env.agent_selection, rng))
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(40):
        agent = env.agent_selection
        assert twin.agent_selection == agent
        a, b = env.last(), twin.last()
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:] == b[1:]
        if not env.agents:
            break
        action = random_action(env, agent, rng)
        env.step(action)
        twin.step(action)


def test_api_test_sees_terminated_episodes() -> None:
    env = uno_env.env(edition="monster_high", num_players=2, episode="round")
    bare = env.unwrapped
    ends: list[int] = []
    original = bare._end_of_round
    bare._end_of_round = lambda: (ends.append(1), original())  # type: ignore[method-assign]
    # api_test resets without a seed and samples unseeded spaces; seeded here, the games it plays are
    # always the same ones (unseeded, about 1 random round in 300 outlasts 1,500 cycles).
    env.reset(seed=0)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(i)
    quietly(lambda: api_test(env, num_cycles=1500))
    assert ends


def test_pickle_before_reset_and_ezpickle() -> None:
    env = raw_env(edition="angry_birds", num_players=3, episode="round", max_players=6)
    assert isinstance(env, EzPickle)
    twin = pickle.loads(pickle.dumps(env))
    assert (twin.rules, twin.max_players, twin.episode) == (env.rules, 6, "round")
    env.reset(seed=4)
    twin.reset(seed=4)
    assert np.array_equal(env.observe("player_1")["observation"], twin.observe("player_1")["observation"])


# ---------------------------------------------------------------- construction, registry, spaces
def test_metadata_agents_and_wrappers() -> None:
    env = uno_env.env(num_players=5)
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(env.unwrapped, raw_env)
    assert env.metadata["name"] == "uno_v0" and env.metadata["is_parallelizable"] is False
    assert set(env.metadata["render_modes"]) == {"human", "ansi"}
    assert env.possible_agents == [f"player_{i}" for i in range(5)]
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection  # noqa: B018
    env.reset(seed=0)
    seat = env.unwrapped.game.current_player
    assert env.agent_selection == f"player_{seat}"


@pytest.mark.skipif(not HAS_PETTINGZOO_REGISTRY, reason="this PettingZoo (before 1.27) has no registry")
def test_registered_for_pettingzoo_make() -> None:
    env = pettingzoo.make("aec", "uno_env/uno-v0", edition="masters_of_the_universe", num_players=3)
    assert isinstance(env.unwrapped, raw_env) and env.unwrapped.rules.edition == "masters_of_the_universe"
    assert pettingzoo.make("aec", "uno_env/uno_v0").unwrapped.rules.num_players == 4


REGISTRY_CHECK = (
    "import pettingzoo, gymnasium\n"
    "if hasattr(pettingzoo, 'make'):\n"
    "    env = pettingzoo.make('aec', 'uno_env/uno-v0', num_players=2)\n"
    "    env.reset(seed=1)\n"
    "    print(env.num_agents)\n"
    "single = gymnasium.make('uno_env/UnoSingleAgent-v0', num_players=3)\n"
    "single.reset(seed=0)\n"
    "print(single.unwrapped.game.num_players)"
)


@pytest.mark.parametrize("imports", [
    "import gymnasium as gym\nimport pettingzoo\nimport uno_env",  # libraries first: import uno_env registers
    "import uno_env\nimport gymnasium, pettingzoo\nuno_env.register_envs()",  # uno_env first: the explicit call
    "import uno_env\nimport gymnasium, pettingzoo",  # uno_env first: registered as each library is imported
    "import uno_env\nimport gymnasium\nimport pettingzoo",  # the hook stays until both are registered
    "import uno_env.core\nimport gymnasium, pettingzoo",  # importing the rules engine alone installs it too
    "import uno_env\nuno_env.register_envs()\nuno_env.register_envs()",  # idempotent, imports both itself
    "import uno_env\nuno_env.env(num_players=2)\nimport gymnasium",  # first use of the env registers both
])
def test_registration_in_a_fresh_interpreter(imports: str) -> None:
    code = f"import warnings\nwarnings.simplefilter('error')\n{imports}\n{REGISTRY_CHECK}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == (["2", "3"] if HAS_PETTINGZOO_REGISTRY else ["3"])


def test_the_registration_hook_keeps_the_libraries_own_loaders_and_removes_itself() -> None:
    code = ("import sys, uno_env\n"
            "hooks = lambda: [f for f in sys.meta_path if type(f).__module__ == 'uno_env']\n"
            "print(len(hooks()))\n"
            "import gymnasium\n"
            "print(len(hooks()), type(gymnasium.__loader__).__module__, gymnasium.__spec__.loader is gymnasium.__loader__)\n"
            "import pettingzoo\n"
            "print(len(hooks()), uno_env.GYM_ID in gymnasium.registry)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1", "_frozen_importlib_external", "True", "0", "True"]


def test_the_registration_hook_asks_the_other_finders_and_changes_no_imported_module() -> None:
    import json

    calls: list[str] = []
    hook = uno_env._RegisterOnImport({"json": lambda: calls.append("json"), "csv": lambda: calls.append("csv")})
    spec = hook.find_spec("json")
    # A fresh spec from the path finders: json's own spec and loader (json is imported) stay as they were.
    assert spec is not None and spec is not json.__spec__ and type(spec.loader).__name__ == "_ThenRegister"
    assert type(json.__spec__.loader).__name__ == "SourceFileLoader" and calls == []
    assert hook.find_spec("xml") is None  # not pending: not its business

    class Nested(importlib.abc.MetaPathFinder):
        """A finder that, while asked for csv, looks json up through the hook (another thread, a nested import)."""

        seen: list[object] = []

        def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
            if fullname == "csv":
                self.seen.append(hook.find_spec("json"))

    nested = Nested()
    sys.meta_path.insert(0, nested)
    try:
        assert hook.find_spec("csv") is not None
    finally:
        sys.meta_path.remove(nested)
    assert Nested.seen and Nested.seen[0] is not None  # answered during the other lookup too


def test_a_registration_that_fails_warns_and_the_library_still_imports() -> None:
    code = ("import sys, warnings, uno_env\n"
            "def broken():\n"
            "    raise RuntimeError('no registry here')\n"
            "[hook] = [f for f in sys.meta_path if type(f).__name__ == '_RegisterOnImport']\n"
            "hook.pending['gymnasium'] = broken\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import gymnasium\n"
            "print(gymnasium.__name__, [str(w.message).split(':')[0] for w in caught if w.category is RuntimeWarning])\n"
            "import pettingzoo\n"
            "print(len([f for f in sys.meta_path if type(f).__name__ == '_RegisterOnImport']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["gymnasium ['uno_env could not register its env ids with gymnasium']", "0"]


def test_importing_uno_env_does_not_import_pettingzoo() -> None:
    code = "import sys, uno_env, uno_env.core\nprint('pettingzoo' in sys.modules, 'gymnasium' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_pettingzoo_style_module_layout() -> None:
    import types

    import uno_env.uno_v0 as module

    assert uno_env.env is module.env and uno_env.raw_env is module.raw_env
    assert type(module) is types.ModuleType and not callable(module)
    assert isinstance(uno_env.env(num_players=2), wrappers.OrderEnforcingWrapper)
    assert type(uno_env.env(num_players=2)) is module.OrderEnforcingWrapper  # stock checks, attributes bound
    # Both libraries are imported here, so uno_env's one-shot registration hook has removed itself.
    assert not any(type(f).__module__.startswith("uno_env") for f in sys.meta_path)


def test_one_action_and_observation_layout_for_every_edition_and_table() -> None:
    obs_spaces, act_spaces = set(), []
    for edition in EDITIONS:
        for n in TABLES:
            env = raw_env(edition=edition, num_players=n)
            space = env.observation_space("player_0")
            obs_spaces.add((space["observation"].shape, space["action_mask"].shape, space["action_mask"].dtype))
            act_spaces.append(env.action_space("player_0"))
    assert obs_spaces == {((observation_size(10),), (NUM_ACTIONS,), np.dtype(np.int8))}
    assert all(space == spaces.Discrete(NUM_ACTIONS) for space in act_spaces)
    small = raw_env(num_players=3, max_players=3)
    assert small.observation_space("player_0")["observation"].shape == (observation_size(3),)


def test_documented_action_table_matches_the_layout() -> None:
    import re

    import uno_env.uno_v0 as module
    from uno_env.core import action_texts

    rows = re.findall(r"^(\d+)(?:-(\d+))?\s+``([^`]+)``", module.__doc__ or "", re.MULTILINE)
    covered = []
    for edition in EDITIONS.values():
        texts = action_texts(edition)
        assert len(texts) == NUM_ACTIONS == 80
        for first, last, pattern in rows:
            words = {w.split()[0] for w in pattern.split("|")} | {pattern.split()[0]}
            for i in range(int(first), int(last or first) + 1):
                if i == 54 and edition.special_code is None:
                    continue  # classic has no special wild; its id is never legal
                assert texts[i].split()[0] in words, (i, texts[i], pattern)
                covered.append(i)
    assert set(covered) == set(range(NUM_ACTIONS))


def test_bad_arguments_raise() -> None:
    with pytest.raises(RulesError):
        raw_env(edition="uno_flip")
    with pytest.raises(RulesError):
        raw_env(num_players=11)
    for bad in ({"episode": "match"}, {"reward": "points"}, {"max_players": 3}, {"max_turns": 0},
                {"render_mode": "rgb_array"}):
        with pytest.raises(ValueError):
            raw_env(**bad)
    assert raw_env().max_turns == DEFAULT_MAX_TURNS["game"] == 100_000
    assert raw_env(episode="round").max_turns == DEFAULT_MAX_TURNS["round"] == 10_000


# ---------------------------------------------------------------- observations and masks
def test_mask_only_for_the_deciding_agent_and_observation_is_the_encoder() -> None:
    env = raw_env(edition="monster_high", num_players=4, episode="round")
    env.reset(seed=2)
    rng = random.Random(2)
    for _ in range(300):
        if not env.agents or env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        game = env.game
        for agent in env.agents:
            seat = int(agent.split("_")[1])
            obs = env.observe(agent)
            assert np.array_equal(obs["observation"], observe(game, seat))
            if agent == env.agent_selection:
                assert seat == game.current_player
                assert np.flatnonzero(obs["action_mask"]).tolist() == [int(a) for a in game.legal_actions()]
            else:
                assert not obs["action_mask"].any()
        env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))


def test_observation_is_exactly_the_information_set() -> None:
    """Determinizing the env's game for a seat never changes that agent's observation or info."""
    env = raw_env(edition="angry_birds", num_players=3, episode="round")
    env.reset(seed=5)
    rng = random.Random(5)
    for step in range(120):
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        if step % 10 == 0:
            for seat in range(3):
                agent = f"player_{seat}"
                twin = pickle.loads(pickle.dumps(env))
                twin.game = env.game.determinize(seat, rng)
                assert np.array_equal(twin.observe(agent)["observation"], env.observe(agent)["observation"])
                assert twin.view(agent)["hand"] == env.view(agent)["hand"]
                assert twin.view(agent)["opponents"] == env.view(agent)["opponents"]
        env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))


# ---------------------------------------------------------------- infos
def test_infos_are_empty_dicts_by_default_and_the_view_is_one_call_away() -> None:
    env = uno_env.env(edition="classic", num_players=4, episode="round", max_turns=300)
    env.reset(seed=1)
    rng = random.Random(1)
    seen = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        assert info == {} and all(v == {} for v in env.infos.values())
        seat = int(agent[-1])
        assert env.view(agent) == env.unwrapped.game.view(seat)
        seen += 1
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert seen > 20
    with pytest.raises(RuntimeError, match="reset"):
        raw_env().view("player_0")


@pytest.mark.slow  # 3.5 s alone here; 14-21 s on a fresh clone under load (issue 25)
def test_infos_view_option_holds_the_deciding_agents_view() -> None:
    env = uno_env.env(edition="masters_of_the_universe", num_players=3, infos="view", target_score=40)
    env.reset(seed=3)
    rng = random.Random(3)
    game = env.unwrapped.game
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        seat = int(agent[-1])
        assert info == game.view(seat)
        if term or trunc:
            assert all(env.infos[a] == game.view(int(a[-1])) for a in env.agents)  # final views for all
            env.step(None)
            continue
        assert info["my_turn"] and info["legal_action_ids"] == np.flatnonzero(obs["action_mask"]).tolist()
        assert all(env.infos[a] == {} for a in env.agents if a != agent)
        snapshot = copy.deepcopy(info)
        env.step(rng.choice(info["legal_action_ids"]))
        assert info == snapshot  # a view handed out is not changed by later steps
    assert game.is_game_over
    with pytest.raises(ValueError, match="infos"):
        raw_env(infos="views")


def test_view_infos_survive_pickling() -> None:
    env = raw_env(num_players=2, infos="view")
    env.reset(seed=2)
    twin = pickle.loads(pickle.dumps(env))
    assert twin.infos == env.infos and twin.infos[twin.agent_selection]["hand"]


def test_infos_keep_fixed_keys_for_buffers() -> None:
    """What buffer-based libraries (Tianshou, AgileRL, RLlib) store: the same keys and shapes every step."""
    env = uno_env.env(edition="monster_high", num_players=2, episode="round")
    env.reset(seed=4)
    rng = random.Random(4)
    shapes = set()
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        shapes.add((tuple(sorted(info)), obs["observation"].shape, obs["action_mask"].shape))
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert shapes == {((), (observation_size(10),), (NUM_ACTIONS,))}


# ---------------------------------------------------------------- rewards
@pytest.mark.parametrize("n", [2, 3, 5])
def test_win_reward_game_episode_winner_plus_one_others_split_minus_one(n: int) -> None:
    env = uno_env.env(edition="monster_high", num_players=n, target_score=1)
    result = run_episode(env, seed=n)
    game = result["game"]
    assert game.is_game_over and len(game.winners) == 1
    winner = f"player_{game.winners[0]}"
    assert result["final"] == {a: (1.0 if a == winner else -1.0 / (n - 1)) for a in env.possible_agents}
    assert result["total"] == result["final"]
    assert sum(result["final"].values()) == pytest.approx(0.0)
    loser = next(a for a in env.possible_agents if a != winner)
    assert result["final"][loser] < 0  # a losing seat sees its loss through last()


def test_win_reward_shared_by_a_team() -> None:
    env = uno_env.env(edition="classic", num_players=4, teams=True, target_score=1)
    result = run_episode(env, seed=1)
    game = result["game"]
    assert sorted(game.winners) in ([0, 2], [1, 3])
    expected = {f"player_{s}": (0.5 if s in game.winners else -0.5) for s in range(4)}
    assert result["final"] == expected


def test_shared_win_formula_k_winners() -> None:
    from uno_env.uno_v0 import _share

    game = Game(Rules(num_players=5), seed=1)
    assert _share([1, 3], game, 5) == [-1 / 3, 0.5, -1 / 3, 0.5, -1 / 3]
    assert sum(_share([0, 1, 2, 3], game, 5)) == pytest.approx(0)
    assert _share(list(range(5)), game, 5) == [0.0] * 5


def test_win_reward_round_episode() -> None:
    env = uno_env.env(edition="angry_birds", num_players=3, episode="round")
    result = run_episode(env, seed=7)
    game = result["game"]
    assert game.round_number == 1 and game.is_round_over
    winner = f"player_{game.round_winner}"
    assert result["final"] == {a: (1.0 if a == winner else -0.5) for a in env.possible_agents}


def test_score_reward_standard_is_round_points_zero_sum() -> None:
    env = uno_env.env(edition="classic", num_players=3, episode="round", reward="score")
    result = run_episode(env, seed=2)
    game = result["game"]
    hands = [game.hand_value(s) for s in range(3)]
    expected = {f"player_{s}": float(-hands[s]) for s in range(3)}
    expected[f"player_{game.round_winner}"] = float(game.round_points[game.round_winner])
    assert game.round_points[game.round_winner] == sum(hands)
    assert result["final"] == expected and sum(expected.values()) == 0


def test_score_reward_lowest_is_mean_minus_own_hand() -> None:
    env = uno_env.env(edition="monster_high", num_players=4, episode="round", reward="score", scoring="lowest")
    result = run_episode(env, seed=3)
    game = result["game"]
    hands = [game.hand_value(s) for s in range(4)]
    mean = sum(hands) / 4
    assert result["final"] == {f"player_{s}": pytest.approx(mean - hands[s]) for s in range(4)}
    assert sum(result["final"].values()) == pytest.approx(0)


def test_score_reward_teams_split_the_winning_points() -> None:
    env = uno_env.env(edition="classic", num_players=4, teams=True, episode="round", reward="score")
    result = run_episode(env, seed=4)
    game = result["game"]
    w = game.round_winner
    hands = [game.hand_value(s) for s in range(4)]
    gain = sum(hands[s] for s in range(4) if s % 2 != w % 2) / 2
    assert result["final"] == {f"player_{s}": (gain if s % 2 == w % 2 else -float(hands[s])) for s in range(4)}


def test_score_reward_paid_at_every_round_end_of_a_game_episode() -> None:
    env = raw_env(edition="monster_high", num_players=3, reward="score")
    env.reset(seed=6)
    rng = random.Random(6)
    paid = []
    while env.game.round_number < 3:
        round_before = env.game.round_number
        agent = env.agent_selection
        env.step(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]).tolist()))
        if env.game.round_number != round_before:
            assert not any(env.terminations.values())
            assert sum(env.rewards.values()) == pytest.approx(0) and any(env.rewards.values())
            paid.append(dict(env.rewards))
        elif paid:
            assert not any(env.rewards.values())  # rewards of a step are cleared on the next
    assert len(paid) == 2


def test_score_reward_elimination_counts_only_seats_still_in() -> None:
    env = raw_env(edition="classic", num_players=3, reward="score", elimination=True, target_score=80)
    env.reset(seed=8)
    rng = random.Random(8)
    checked = 0
    while env.agents and not env.terminations[env.agent_selection] and not env.truncations[env.agent_selection]:
        out_before = list(env.game.eliminated)
        env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))
        if any(env.rewards.values()):
            assert sum(env.rewards.values()) == pytest.approx(0)
            for seat, was_out in enumerate(out_before):
                if was_out:
                    assert env.rewards[f"player_{seat}"] == 0
            checked += 1
    assert checked >= 2 and env.game.is_game_over


def test_truncation_gives_zero_and_sets_truncations() -> None:
    env = uno_env.env(num_players=3, max_turns=7)
    env.reset(seed=0)
    rng = random.Random(0)
    for _ in range(7):
        obs, *_ = env.last()
        env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    seen = {}
    while env.agents:
        agent = env.agent_selection
        obs, reward, term, trunc, _ = env.last()
        assert trunc and not term and not obs["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == dict.fromkeys(env.possible_agents, 0.0)


def test_raw_env_illegal_action_raises_and_changes_nothing() -> None:
    env = raw_env(num_players=2)
    env.reset(seed=3)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = env.observe(agent)["observation"]
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    with pytest.raises(IllegalActionError):
        env.step(None)
    assert env.agent_selection == agent and np.array_equal(env.observe(agent)["observation"], before)


@pytest.mark.parametrize("bad", [55.0, "55", b"55", np.float32(55), np.float64(50.9), 50.9, True, np.bool_(True),
                                 [55], np.array([55]), np.array(55.0)])
def test_raw_env_refuses_non_integer_actions_and_changes_nothing(bad: Any) -> None:
    env = raw_env(num_players=2)
    env.reset(seed=3)
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError, match="int id"):
        env.step(bad)
    assert env.game.to_dict() == before and env.turns == 0


def test_raw_env_accepts_python_and_numpy_integers() -> None:
    from uno_env.uno_v0 import action_id

    for good in (7, np.int64(7), np.int8(7), np.uint16(7), np.array(7), np.array(7, np.int32)):
        assert action_id(good) == 7 and type(action_id(good)) is int
    env = raw_env(num_players=2)
    env.reset(seed=3)
    for kind in (int, np.int64, np.array):
        legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        env.step(kind(legal))
    assert env.turns == 3


def test_wrapped_env_illegal_action_ends_episode_with_penalty() -> None:
    env = uno_env.env(num_players=3)
    env.reset(seed=3)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    finals = {}
    while env.agents:
        finals[env.agent_selection] = env.last()[1]
        env.step(None)
    assert finals == {a: (-1.0 if a == agent else 0.0) for a in env.possible_agents}


def test_wrapped_env_refuses_actions_out_of_bounds_and_non_integers_with_illegal_action_error() -> None:
    """The README's promise holds for env() as for raw_env(): a typed error, nothing changed (also under -O)."""
    env = uno_env.env(num_players=3)
    env.reset(seed=0)
    agent = env.agent_selection
    before = env.observe(agent)
    for bad in (NUM_ACTIONS, -1, 2.5, 55.0, "55", "draw", b"55", None, True, np.float32(55), np.int64(NUM_ACTIONS)):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    after = env.observe(agent)
    assert env.agent_selection == agent and env.unwrapped.turns == 0 and not any(env.terminations.values())
    assert np.array_equal(before["observation"], after["observation"])
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.int64(legal[0]))  # numpy integers are actions too
    assert env.unwrapped.turns == 1


def test_rewards_are_python_floats_and_flags_bools() -> None:
    env = uno_env.env(edition="monster_high", num_players=2, target_score=1)
    env.reset(seed=1)
    rng = random.Random(1)
    for _agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        assert type(reward) is float and type(term) is bool and type(trunc) is bool
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


def test_reset_from_a_given_game() -> None:
    game = position("classic", num_players=4, hands={0: ["R1"]}, discard=["R7"], current=0)
    env = uno_env.env(num_players=4, episode="round")
    env.reset(options={"game": game})
    assert env.agent_selection == "player_0"
    env.step(game.parse_action("play R1"))  # player_0 goes out
    assert all(env.terminations.values())
    assert env.last()[1] == 1.0 and game.hand_sizes[0] == 1  # the env played on a copy
    with pytest.raises(ValueError):
        env.reset(options={"game": Game(Rules(num_players=3), seed=1)})


# ---------------------------------------------------------------- rendering
def test_ansi_render_is_the_deciding_seats_view_without_hidden_cards() -> None:
    env = uno_env.env(edition="classic", num_players=3, render_mode="ansi")
    env.reset(seed=9)
    text = env.render()
    game = env.unwrapped.game
    seat = game.current_player
    assert "UNO - 3 players - round 1" in text and f"Your hand (seat {seat})" in text
    from uno_env.render import render_table

    log_end = len(game.log)
    rng = random.Random(1)
    for other in range(3):
        if other != seat:
            twin = game.determinize(seat, rng)
            assert twin.hands[other] != game.hands[other]
            assert render_table(twin, seat, log_end) == render_table(game, seat, log_end)


def test_human_render_prints(capsys: pytest.CaptureFixture[str]) -> None:
    env = uno_env.env(edition="monster_high", num_players=2, render_mode="human")
    env.reset(seed=1)
    assert env.render() is None
    assert "UNO Monster High" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("edition", "hands", "actions", "flavour"),
    [
        ("monster_high", {0: ["WU", "B1", "B2", "G3"]}, ["play WU", "give blue", "color green"], '"Urrrhhh!"'),
        ("masters_of_the_universe", {0: ["WG", "B1", "B2"]}, ["play WG", "color red"], '"By the power of Greyskull'),
        ("angry_birds", {0: ["WK", "B1", "B2"]}, ["play WK", "color red"], "King Pig deals"),
    ],
)
def test_render_has_edition_flavour(edition: str, hands: dict, actions: list[str], flavour: str) -> None:
    game = position(edition, num_players=3, hands=hands, discard=["Y5" if edition != "masters_of_the_universe" else "P5"])
    env = uno_env.env(edition=edition, num_players=3, render_mode="ansi")
    env.reset(options={"game": game})
    for action in actions:
        env.step(game.parse_action(action))
    assert flavour in env.render()


def test_render_without_mode_warns_and_returns_none() -> None:
    env = raw_env()
    env.reset(seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert env.render() is None
    assert caught


def test_observation_documented_example_in_the_env() -> None:
    env = raw_env(edition="angry_birds", num_players=4)
    env.reset(seed=2)
    parts = split_observation(env.observe(env.agent_selection)["observation"])
    assert parts["to_act"][0] == 1 and parts["present"].sum() == 4 and parts["hand"].sum() == 7


def test_docstring_examples_run() -> None:
    import doctest

    import uno_env.single_agent as single_agent_module
    import uno_env.uno_v0 as env_module

    for module in (env_module, single_agent_module):
        result = doctest.testmod(module)
        assert result.attempted >= 3 and result.failed == 0


def test_wrapped_env_refuses_bad_actions_with_illegal_action_error_under_python_optimize() -> None:
    code = ("import uno_env\nfrom uno_env.core import IllegalActionError\n"
            "env = uno_env.env(num_players=2)\nenv.reset(seed=0)\n"
            "for bad in (55.0, '55', None, 999):\n"
            "    try:\n        env.step(bad)\n    except IllegalActionError:\n        print('refused')\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["refused"] * 4


def test_wrapped_env_binds_the_episode_attributes_instead_of_forwarding_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """last(), agent_iter() and the wrappers' checks never go through BaseWrapper.__getattr__ once reset."""
    env = uno_env.env(num_players=3, episode="round")
    env.reset(seed=2)
    forwarded: list[str] = []
    original = wrappers.BaseWrapper.__getattr__

    def counting(self: Any, name: str) -> Any:
        forwarded.append(name)
        return original(self, name)

    monkeypatch.setattr(wrappers.BaseWrapper, "__getattr__", counting)
    rng = random.Random(2)
    for _agent in env.agent_iter(max_iter=300):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert forwarded == []


def test_infos_mask_gives_every_agent_its_action_mask() -> None:
    env = uno_env.env(num_players=3, episode="round", infos="mask")
    env.reset(seed=5)
    rng = random.Random(5)
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        for other in env.agents:
            assert set(env.infos[other]) == {"action_mask"}
            assert env.infos[other]["action_mask"].dtype == np.int8
            assert np.array_equal(env.infos[other]["action_mask"], env.unwrapped.observe(other)["action_mask"])
        assert np.array_equal(info["action_mask"], obs["action_mask"]) and agent == env.agent_selection
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


def test_unknown_keyword_is_a_type_error_and_a_rules_error_wherever_the_env_takes_keywords() -> None:
    from uno_env.core import RulesError, UnknownOptionError

    for make in (uno_env.env, uno_env.raw_env, uno_env.SingleAgentEnv):
        with pytest.raises(TypeError, match="unknown rule option.*frameskip") as caught:
            make(num_players=2, frameskip=4)
        assert isinstance(caught.value, RulesError) and isinstance(caught.value, UnknownOptionError)
    with pytest.raises(TypeError, match="frameskip"):
        gymnasium.make(uno_env.GYM_ID, frameskip=4)
    with pytest.raises(TypeError, match="unknown rule option.*frameskip"):
        uno_env.round_robin(uno_env.env(num_players=2, frameskip=4))
    with pytest.raises(TypeError, match="frameskip"):
        uno_env.round_robin(uno_env.env(num_players=2), frameskip=4)  # Python's own error: round_robin takes none
    if HAS_PETTINGZOO_REGISTRY:
        with pytest.raises(TypeError, match="unknown rule option.*frameskip"):
            pettingzoo.make("aec", uno_env.ENV_ID, num_players=2, frameskip=4)
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    with pytest.raises(TypeError, match="unknown rule option.*frameskip"):  # the documented parallel env
        turn_based_aec_to_parallel(uno_env.env(num_players=2, frameskip=4))
    with pytest.raises(TypeError, match="unknown rule option.*frameskip"):
        gymnasium.make("uno_env.single_agent:" + uno_env.GYM_ID, frameskip=4)
    for rules_call in (lambda: Rules(frameskip=4), lambda: Rules().replace(frameskip=4)):
        with pytest.raises(UnknownOptionError, match="unexpected keyword argument 'frameskip'"):
            rules_call()
    with pytest.raises(TypeError, match="frameskip"):
        uno_env.rllib_observations(uno_env.env(num_players=2), frameskip=4)  # Python's own error: it takes none


def test_unknown_keyword_message_has_pythons_wording_that_torchrl_matches() -> None:
    # TorchRL's GymEnv drops frameskip only when the TypeError says "unexpected keyword argument 'frameskip'".
    for make in (uno_env.env, uno_env.SingleAgentEnv):
        with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
            make(frameskip=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'a_bogus'"):
        uno_env.env(a_bogus=1, frameskip=1)  # Python's wording names the first, like Python does


def stock_wrapped_env(**kwargs: Any) -> Any:
    """``raw_env`` under PettingZoo's own wrappers, stacked as ``env()`` stacks its subclasses."""
    aec: Any = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(aec))


def drive(env: Any, seed: int, steps: int) -> list[Any]:
    """Everything a seeded, erratic client sees: every call's result, error and PettingZoo warning."""
    from pettingzoo.utils.env_logger import EnvLogger

    rng = random.Random(seed)
    seen: list[Any] = []

    def call(name: str, *args: Any) -> Any:
        EnvLogger.flush()
        try:
            result = getattr(env, name)(*args)
        except Exception as error:  # noqa: BLE001 (the error itself is what is compared)
            seen.append(("error", name, type(error).__name__, str(error)))
            return None
        seen.append(("called", name, list(EnvLogger.mqueue)))
        return result

    def record(out: Any) -> None:
        if isinstance(out, tuple):  # last(): observation (or None), reward, flags, info
            obs = out[0]
            seen.append(("last", None if obs is None else (obs["observation"].tolist(), obs["action_mask"].tolist()), out[1:]))

    call("last")
    call("step", 0)
    call("observe", "player_0")
    call("agent_iter")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.reset(seed=seed)
        left = steps
        while left > 0:
            for agent in env.agent_iter(max_iter=rng.randrange(1, 200)):  # stops at the end or after max_iter
                left -= 1
                roll = rng.random()
                if roll < 0.1:
                    record(call("last", False))  # no observation: the illegal check observes itself
                elif roll < 0.2:
                    obs = call("observe", rng.choice(env.possible_agents))  # any agent's
                    seen.append(("observe", obs["observation"].tolist(), obs["action_mask"].tolist()))
                else:
                    record(call("last"))
                if env.terminations[agent] or env.truncations[agent]:
                    call("step", None if rng.random() < 0.95 else 0)
                    continue
                mask = env.unwrapped.observe(agent)["action_mask"]
                pool = np.flatnonzero(mask == 0) if rng.random() < 0.01 else np.flatnonzero(mask)
                action = int(rng.choice(pool.tolist()))
                call("step", action if rng.random() < 0.8 else np.int64(action))
                seen.append(("state", env.agent_selection if env.agents else None, dict(env.rewards),
                             dict(env.terminations), dict(env.truncations), dict(env._cumulative_rewards)))
            seen.append(("iteration ended", left, list(env.agents)))
            if not env.agents:
                call("step", None)  # after the end: PettingZoo's warning
                env.reset()
            elif rng.random() < 0.3:
                agents = iter(env.agent_iter())
                next(agents)
                try:
                    next(agents)  # no step in between: PettingZoo's iterator refuses
                except AssertionError as error:
                    seen.append(("error", "next", type(error).__name__, str(error)))
                env.reset()
    return seen


@pytest.mark.parametrize("num_players", [2, 4])
def test_env_wrappers_do_exactly_what_pettingzoos_stock_wrappers_do(num_players: int) -> None:
    # env()'s subclasses take one-hop paths for the usual calls: every result, error and warning
    # must be PettingZoo's, illegal moves, finished agents and calls before reset included.
    kwargs = {"num_players": num_players, "episode": "round", "max_turns": 120}
    ours = drive(uno_env.env(**kwargs), seed=num_players, steps=1_500)
    stock = drive(stock_wrapped_env(**kwargs), seed=num_players, steps=1_500)
    assert len(ours) == len(stock) and ours == stock
    refused = {(entry[1], entry[2]) for entry in stock if entry[0] == "error"}
    assert refused == {("last", "AttributeError"), ("step", "AssertionError"), ("observe", "AssertionError"),
                       ("agent_iter", "AssertionError"),  # before reset
                       ("step", "ValueError"),  # a finished agent stepped with an action
                       ("next", "AssertionError")}  # agent_iter's next without a step
    warned = [m for entry in stock if entry[0] == "called" for m in entry[2]]
    assert any("Illegal move" in m for m in warned) and any("after all agents" in m for m in warned)
