"""uno_env.round_robin: seats act in a fixed cycle, so every seat's transitions reach its own result."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import uno_env
from uno_env.core.errors import IllegalActionError
from uno_env.turns import WAIT


@pytest.mark.parametrize("players", [2, 3])
def test_round_robin_passes_pettingzoo_api_test(players: int) -> None:
    api_test(uno_env.round_robin(uno_env.env(num_players=players, episode="round", max_players=players)),
             num_cycles=500)


def test_seats_cycle_and_each_ends_with_its_own_reward() -> None:
    players = 3
    aec = uno_env.round_robin(uno_env.env(num_players=players, episode="round", max_players=players))
    aec.reset(seed=1)
    rng = np.random.default_rng(0)
    live: list[str] = []
    final: dict[str, float] = {}
    for agent in aec.agent_iter():
        obs, reward, termination, truncation, _ = aec.last()
        if termination or truncation:
            final[agent] = reward
            aec.step(None)
            continue
        live.append(agent)
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    order = aec.possible_agents
    assert all(order[(order.index(a) + 1) % players] == b for a, b in zip(live, live[1:], strict=False))
    assert sorted(final.values()) == [-0.5, -0.5, 1.0]


def test_a_waiting_seat_may_only_wait() -> None:
    aec = uno_env.round_robin(uno_env.env(num_players=2, episode="round", max_players=2))
    aec.reset(seed=0)
    for _ in range(200):
        agent = aec.agent_selection
        mask = aec.observe(agent)["action_mask"]
        if mask.sum() == 1 and mask[WAIT] and agent != aec.unwrapped.agent_selection:
            with pytest.raises(IllegalActionError, match="WAIT"):
                aec.step(55)
            assert aec.agent_selection == agent
            return
        aec.step(int(np.flatnonzero(mask)[0]))
    pytest.fail("no waiting turn in 200 steps")
