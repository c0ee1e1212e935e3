"""One way to drive an agent at a seat (``agents.choose_action``), used by the tournament and the apps."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents import Agent, RandomAgent, RuleAgent, action_mask, agent_observation, choose_action
from tests.helpers import position
from uno_app.terminal import ForgetfulAgent
from uno_env.core import Game, IllegalActionError, Rules
from uno_env.observation import observation_size, observe


class Scripted(Agent):
    """Answers a fixed value and remembers what it was given."""

    def __init__(self, answer: Any, players: int | None = None) -> None:
        self.answer = answer
        self.players = players
        self.seen: list[tuple[Mapping[str, Any] | None, Mapping[str, Any]]] = []

    def observation_players(self) -> int | None:
        return self.players

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        self.seen.append((observation, info))
        return self.answer  # type: ignore[no-any-return]


def test_choose_action_gives_the_seats_view_mask_and_sized_observation() -> None:
    game = Game(Rules(num_players=3), seed=4)
    seat = game.current_player
    assert seat is not None
    legal = [int(a) for a in game.legal_actions()]
    agent = Scripted(np.int64(legal[0]), players=5)
    assert choose_action(agent, game) == legal[0] and type(choose_action(agent, game)) is int
    observation, info = agent.seen[0]
    assert info == game.view(seat)
    assert observation is not None and np.array_equal(observation["action_mask"], action_mask(legal))
    assert observation["observation"].shape == (observation_size(5),)
    assert np.array_equal(observation["observation"], observe(game, seat, 5))
    assert "observation" not in agent_observation(RuleAgent(), game, seat, info)  # only agents that read one


def test_the_observation_size_follows_the_agent_and_its_wrappers(tmp_path: Path) -> None:
    from agents import make_agent
    from tests.test_play import _tiny_checkpoint

    ppo = make_agent(f"ppo:{_tiny_checkpoint(tmp_path / 'four.safetensors', max_players=4)}")
    assert ppo.observation_players() == 4
    assert ForgetfulAgent(ppo, 0.5).observation_players() == 4
    assert RandomAgent().observation_players() is None and ForgetfulAgent(RuleAgent(), 0.5).observation_players() is None
    game = Game(Rules(num_players=3), seed=1)
    assert 0 <= choose_action(ForgetfulAgent(ppo, 0.0), game) < 2000  # plays with its 4-seat vector


@pytest.mark.parametrize("answer", ["55", 55.0, None, 10_000])
def test_an_answer_that_is_not_a_legal_id_is_refused_naming_the_agent(answer: Any) -> None:
    game = position("classic", 2, hands={0: ["G1", "G2"]}, discard=["R7"])
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match=r"Scripted\(\) at seat 0 chose"):
        choose_action(Scripted(answer), game)
    assert game.to_dict() == before


def test_choose_action_refuses_when_no_seat_is_to_act() -> None:
    game = position("classic", 2, hands={0: ["G7"]}, discard=["R7"])
    game.step("play G7")
    while not game.is_round_over:
        game.step(game.legal_actions()[0])
    with pytest.raises(IllegalActionError, match="no seat is to act"):
        choose_action(RuleAgent(), game)
