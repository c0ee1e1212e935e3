"""The examples' score: a trained policy's round win rate against uniformly random legal play.

Each example trains one seat of a 2-player classic table against an opponent that picks uniformly
among its legal actions (the random policy of Tianshou, TorchRL and AgileRL's tutorials), then
measures the policy's most likely legal action over ``games`` rounds with the project's own
harness (``agents.tournament.evaluate``: seats rotated over duplicate deals, 95% Wilson interval).
A round still running after ``max_decisions`` decisions is abandoned and counts as not won.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agents import Agent
from agents.tournament import evaluate
from uno_env.core.rules import Rules

Scores = Callable[[np.ndarray, np.ndarray], Any]
"""Maps one observation vector (float32) and its action mask (int8) to one score per action id
(logits, Q-values, or a one-hot of the chosen action)."""


class GreedyPolicy(Agent):
    """Plays the legal action with the highest score under ``scores``."""

    name = "greedy-policy"
    needs_observation = True

    def __init__(self, scores: Scores, max_players: int = 2) -> None:
        self.scores = scores
        self.max_players = max_players

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        assert observation is not None
        mask = np.asarray(observation["action_mask"], np.int8)
        values = np.asarray(self.scores(np.asarray(observation["observation"], np.float32), mask), np.float64)
        values = np.where(mask == 1, values.reshape(-1), -np.inf)
        return int(values.argmax())


def win_rate_against_random(scores: Scores, games: int = 200, seed: int = 1,
                            max_decisions: int = 1_000) -> tuple[float, int, float, float]:
    """(rounds won, rounds played, Wilson 95% low, high) of the greedy policy against uniform random play."""
    result = evaluate([GreedyPolicy(scores), "random-uniform"], Rules(num_players=2), games=games, seed=seed,
                      max_decisions=max_decisions)
    stats = result.stats()[0]
    return stats.wins, stats.games, stats.ci_low, stats.ci_high
