"""The self-play pool's ratings: Elo of the learner against each baseline and snapshot, from finished episodes.

The pool's snapshots themselves are ``RunState.snapshots`` (kept by ``training.run.schedule``);
each trainer seats them by the draw rule of ``training.run.config.PoolConfig``.
"""

from __future__ import annotations

from typing import TypedDict

ELO_START = 1000.0
ELO_K = 16.0


class Outcome(TypedDict):
    """A finished learner episode, as ``training.sb3.pool.TrainingEnv`` reports it in ``info["outcome"]``."""

    won: bool
    truncated: bool
    length: int
    edition: str
    num_players: int
    opponents: dict[int, str]
    """seat -> who played it (a baseline spec or a snapshot name)"""
    winners: list[int]


def update_ratings(elo: dict[str, float], outcome: Outcome, baselines: list[str]) -> list[str]:
    """Update ``elo`` from one episode (a win or a loss against each opponent seat; truncated episodes and
    other seats' wins rate nothing); returns the opponents that are still in the pool."""
    present = []
    for seat, name in outcome["opponents"].items():
        if name not in elo and name not in baselines:
            continue  # a snapshot dropped from the pool while this episode ran
        present.append(name)
        if outcome["truncated"]:
            continue
        if outcome["won"]:
            result = 1.0
        elif seat in outcome["winners"]:
            result = 0.0
        else:
            continue
        learner, other = elo.setdefault("learner", ELO_START), elo.setdefault(name, ELO_START)
        expected = 1.0 / (1.0 + 10 ** ((other - learner) / 400.0))
        elo["learner"] = learner + ELO_K * (result - expected)
        elo[name] = other - ELO_K * (result - expected)
    return present
