"""The env as other libraries and the docs use it: the env page's loop, the parallel API, agents on the env."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

import uno_env
from agents import HumanAgent, ISMCTSAgent, RuleAgent

ENV_PAGE = Path(__file__).resolve().parent.parent / "docs" / "env.md"  # the site's env page


def env_page_block(marker: str) -> str:
    """The env page's python code block that contains ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", ENV_PAGE.read_text(), re.DOTALL)
    matches = [b for b in blocks if marker in b]
    assert len(matches) == 1, f"{len(matches)} blocks of docs/env.md contain {marker!r}"
    return matches[0]


def test_env_page_pettingzoo_loop_replays_identically_in_fresh_interpreters() -> None:
    code = env_page_block("env.action_space(agent).seed(")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.strip()
    turns = int(runs[0].stdout.split()[0])
    assert turns > 10


def test_env_page_registry_block_runs_in_a_fresh_interpreter() -> None:
    code = env_page_block("uno_env.register_envs()")
    if not hasattr(__import__("pettingzoo"), "make"):
        pytest.skip("this PettingZoo (before 1.27) has no registry")
    out = subprocess.run([sys.executable, "-c", code + "\nprint(aec.unwrapped.rules.edition, type(single).__name__)"],
                         capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["monster_high", "OrderEnforcing"]


@pytest.mark.slow
def test_env_page_single_agent_snippet_trains_with_one_torch_thread() -> None:
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (the train extra)")
    code = env_page_block("MaskablePPO(") + "\nprint(torch.get_num_threads(), model.num_timesteps)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["1", "512"]


def test_aec_to_parallel_refuses_and_turn_based_conversion_plays_whole_games() -> None:
    with pytest.raises(AssertionError, match="parallelizable"):
        aec_to_parallel(uno_env.env(num_players=3))
    parallel = turn_based_aec_to_parallel(uno_env.env(num_players=3, episode="round", max_turns=400))
    parallel_api_test(parallel, num_cycles=200)
    rng = np.random.default_rng(0)
    observations, _ = parallel.reset(seed=4)
    totals = dict.fromkeys(parallel.possible_agents, 0.0)
    steps = 0
    while parallel.agents:
        deciding = [a for a, o in observations.items() if o["action_mask"].any()]
        assert len(deciding) == 1  # one seat decides at a time; the others' masks are all zero
        # The lowest legal id plays a card before drawing, so the round ends well before max_turns.
        actions = {a: int(np.flatnonzero(o["action_mask"])[0]) if a in deciding else int(rng.integers(80))
                   for a, o in observations.items()}
        observations, rewards, terminations, truncations, infos = parallel.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
        if parallel.agents:
            assert {i["active_agent"] for i in infos.values()} == {parallel.unwrapped.agent_selection}
        steps += 1
    assert steps > 5 and sum(totals.values()) == pytest.approx(0.0) and any(totals.values())


@pytest.mark.parametrize("make", [lambda: RuleAgent(), lambda: ISMCTSAgent(iterations=20, seed=1)],
                         ids=["rule", "ismcts"])
def test_view_reading_agents_play_through_the_env(make) -> None:
    """Agents that read the seat's view get it from ``env.view`` (default infos) or ``infos="view"``."""
    for infos in (None, "view"):
        env = uno_env.env(num_players=2, episode="round", infos=infos)
        env.reset(seed=5)
        agent = make()
        rng = np.random.default_rng(5)
        for name in env.agent_iter():
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if name == "player_0":
                view = info if infos == "view" else env.view(name)
                action = agent.act(observation, view)
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
        assert env.unwrapped.game.is_round_over


def test_human_agent_reads_the_view_through_the_env() -> None:
    env = uno_env.env(num_players=2, episode="round")
    env.reset(seed=6)
    agent_name = env.agent_selection
    typed = iter(["not an action", str(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))])
    shown: list[str] = []
    human = HumanAgent(input_fn=lambda _prompt: next(typed), output_fn=shown.append)
    action = human.act(env.last()[0], env.view(agent_name))
    env.step(action)
    assert shown and env.unwrapped.turns == 1


def test_rllib_observations_key_the_env_for_rllibs_masking_module() -> None:
    """``uno_env.rllib_observations``: RLlib's ActionMaskingTorchRLModule reads 'observations' and a float 'action_mask'.

    (PettingZoo's ``api_test`` samples with the mask, which Gymnasium wants as int8, so it does not apply.)
    """
    import doctest

    import uno_env.rllib

    assert doctest.testmod(uno_env.rllib).failed == 0
    aec = uno_env.rllib_observations(uno_env.env(num_players=3, episode="round"))
    aec.reset(seed=4)
    bare = aec.unwrapped
    for agent in aec.possible_agents:
        obs, space = aec.observe(agent), aec.observation_space(agent)
        assert set(obs) == {"observations", "action_mask"} and space.contains(obs)
        assert obs["action_mask"].dtype == np.float32
        assert np.array_equal(obs["action_mask"], bare.observe(agent)["action_mask"])
        assert np.array_equal(obs["observations"], bare.observe(agent)["observation"])
    assert aec.observation_space("player_0") is aec.observation_space("player_0")
    for _agent in aec.agent_iter(max_iter=2_000):
        obs, _, term, trunc, _ = aec.last()
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(None if term or trunc else int(legal[0]))
        if not term and not trunc:
            assert aec.observation_space(aec.agent_selection).contains(aec.observe(aec.agent_selection))


def test_the_examples_score_tells_a_policy_that_plays_its_cards_from_one_that_draws() -> None:
    # examples/ecosystem/against_random.py, each ecosystem example's score: the greedy policy over
    # per-action scores against uniform random play, with a Wilson interval. It must separate a policy
    # that plays a card whenever one plays (and calls UNO, catches) from one that draws instead.
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "examples" / "ecosystem" / "against_random.py"
    spec = importlib.util.spec_from_file_location("against_random", path)
    assert spec is not None and spec.loader is not None
    scoring = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scoring)
    from uno_env.core.actions import CATCH, DRAW, KEEP, NUM_ACTIONS, UNO

    cards_first = np.zeros(NUM_ACTIONS)
    cards_first[:DRAW] = 1.0
    cards_first[[UNO, CATCH]] = 1.0
    cards_first[[DRAW, KEEP]] = -1.0
    won, played, low, high = scoring.win_rate_against_random(lambda obs, mask: cards_first, games=60, seed=5)
    assert played == 60 and low > 0.5  # measured: 60 of 60
    won, played, low, high = scoring.win_rate_against_random(lambda obs, mask: -cards_first, games=20, seed=5,
                                                             max_decisions=400)
    assert played == 20 and high < 0.5  # draws whenever it may: it rarely goes out (measured: 0 of 20)


def test_the_version_matrix_on_the_ecosystem_page_is_what_this_venv_resolved() -> None:
    # docs/ecosystem.md's matrix comes from `pip freeze` of .venv and .venv-eco. Here: the column of
    # the venv this runs in (.venv-eco where Tianshou is installed), for every package whose version
    # the pins decide (numpy, and gymnasium / pettingzoo in .venv, are unpinned: left to the dated freeze).
    import importlib.metadata
    import importlib.util

    page = (Path(__file__).resolve().parent.parent / "docs" / "ecosystem.md").read_text(encoding="utf-8")
    section = page.split("## Tested version matrix", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| package")]
    eco = importlib.util.find_spec("tianshou") is not None
    unpinned = {"numpy", "rlcard", "open_spiel"} | (set() if eco else {"gymnasium", "pettingzoo"})
    checked = []
    for names, main, in_eco in rows:
        cell = in_eco if eco else main
        if cell.startswith("-"):
            continue
        for name, version in zip(names.split(" / "), cell.split(" / "), strict=True):
            name = re.sub(r"\[.*?\]|\(.*|`.*", "", name).strip()
            if name in unpinned:
                continue
            documented = version.split()[0]
            assert importlib.metadata.version(name).split("+")[0] == documented.split("+")[0], name
            checked.append(name)
    assert {"torch", "stable-baselines3", "sb3-contrib"} <= set(checked)
    if eco:
        assert {"gymnasium", "pettingzoo", "ray", "tianshou", "agilerl", "torchrl", "supersuit"} <= set(checked)
