"""The self-play pool's rules, the one copy for every trainer: who sits at each opponent seat, and the ratings.

The pool is the baselines (``pool.baselines``) and the frozen snapshots of the learner
(``RunState.snapshots``, oldest first, kept by ``training.run.schedule``). ``draw_opponents``
decides, from three uniforms per seat, which of them plays a seat; ``update_ratings`` turns a
finished episode into Elo updates. Both are functions of data: the SB3 trainer's
``training.sb3.pool.PoolOpponent`` calls them one seat at a time with numpy, the batched
trainer's ``training.batched.selfplay.SelfPlay`` calls them on tensors of every table's seats.

>>> import numpy as np
>>> seats = np.array([[0.9, 0.1, 0.5],    # not a baseline (0.9 >= 0.3), the newest snapshot (0.1 < 0.5)
...                   [0.2, 0.7, 0.6],    # a baseline (0.2 < 0.3): the second of two (0.6 * 2 -> 1)
...                   [0.5, 0.8, 0.4]])   # an older snapshot (0.8 >= 0.5): the second of three (0.4 * 3 -> 1)
>>> draw_opponents(seats, baselines=2, snapshots=4, baseline_share=0.3, latest_share=0.5).tolist()
[5.0, 1.0, 3.0]
>>> draw_opponents(seats, baselines=2, snapshots=0, baseline_share=0.3, latest_share=0.5).tolist()  # no self-play yet
[1.0, 1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = ["ELO_K", "ELO_START", "Outcome", "Result", "draw_opponents", "update_ratings"]

ELO_START = 1000.0
ELO_K = 16.0

Uniforms = TypeVar("Uniforms", "np.ndarray[Any, Any]", "torch.Tensor")


def draw_opponents(uniforms: Uniforms, baselines: int, snapshots: int, baseline_share: float,
                   latest_share: float) -> Uniforms:
    """The pool member at each seat, from ``uniforms[..., 0:3]`` (three independent uniforms in [0, 1) per seat).

    The draw rule (``training.run.config.PoolConfig``): a baseline with chance ``baseline_share``
    (always while ``snapshots`` is 0: before the first snapshot or before ``pool.baseline_only_steps``),
    else the newest snapshot with chance ``latest_share`` (always when it is the only one), else one
    of the older snapshots; the baseline or older snapshot is drawn uniformly. Uniform 0 decides
    baseline or snapshot, uniform 1 newest or older, uniform 2 which one.

    Returns, per seat, the member's index in ``baselines + snapshots`` (``i < baselines``: baseline
    ``i``; ``baselines + j``: snapshot ``j``, oldest first) as a float holding a whole number, in the
    array type given (numpy or torch: the rule is arithmetic only, so both compute the same choices).
    """
    chance, recency, which = uniforms[..., 0], uniforms[..., 1], uniforms[..., 2]
    # floor(u * n) < n for every float u < 1 under round-to-nearest, so no clamp is needed.
    baseline = (which * baselines) // 1
    if snapshots == 0:
        return baseline
    newest = recency < (latest_share if snapshots > 1 else 1.0)  # every uniform is below 1: the only snapshot
    older = (which * (snapshots - 1)) // 1
    snapshot = baselines + newest * (snapshots - 1) + ~newest * older
    take_baseline = chance < baseline_share
    return take_baseline * baseline + ~take_baseline * snapshot  # type: ignore[no-any-return]


class Result(TypedDict):
    """What the ratings read of a finished learner episode (either trainer)."""

    won: bool
    """Whether the learner's seat is among the winners."""
    truncated: bool
    """Cut off (``env.max_turns``) before its end: rates nothing."""
    opponents: Mapping[int, str]
    """seat -> who played it (a baseline spec or a snapshot name); the learner's seat is not in it"""
    winners: Collection[int]
    """The winning seats (empty when truncated)."""


class Outcome(Result):
    """A finished learner episode, as ``training.sb3.pool.TrainingEnv`` reports it in ``info["outcome"]``."""

    length: int
    edition: str
    num_players: int


def update_ratings(elo: dict[str, float], outcome: Result, baselines: list[str]) -> list[str]:
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
