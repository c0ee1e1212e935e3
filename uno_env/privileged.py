"""What one seat cannot know, as a vector: the privileged critic's extra input (and a search agent's).

PPO's advantage estimates are noisy in UNO: most of a round's outcome is decided by cards
nobody has seen yet. With ``ppo.privileged_critic: true`` the training env appends, after the
observer's public vector, what the observer cannot know (every other seat's hand and the next
cards of the draw pile); the policy network reads only the public part, the value network
reads everything (an asymmetric actor-critic). A determinized position, as a search agent
builds (``agents.guided``), holds every hand, so the same vector of it feeds the exported
critic (``agents.critic``). Training imports these names from ``training.run.critic``.

``privileged_features(game, seat, max_players)`` is the appended part:

==============  ============  ====================================================
name            size          content
==============  ============  ====================================================
hands           (M-1) x 55    for offsets 1..M-1: count of each kind in that hand
next_draws      3 x 55        the next three cards of the draw pile, one-hot each
==============  ============  ====================================================
"""

from __future__ import annotations

import numpy as np

from .core import Game
from .core.cards import NUM_KINDS
from .observation import MAX_COPIES, observation_bounds, observation_size

__all__ = ["NEXT_DRAWS", "critic_bounds", "critic_size", "privileged_features", "privileged_size"]

NEXT_DRAWS = 3


def privileged_size(max_players: int) -> int:
    """Length of the hidden part appended for the critic."""
    return (max_players - 1) * NUM_KINDS + NEXT_DRAWS * NUM_KINDS


def critic_size(max_players: int) -> int:
    """Length of the training observation: the public vector, then the hidden part."""
    return observation_size(max_players) + privileged_size(max_players)


def critic_bounds(max_players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of the training observation."""
    low, high = observation_bounds(max_players)
    extra_high = np.concatenate([np.tile(MAX_COPIES, max_players - 1), np.ones(NEXT_DRAWS * NUM_KINDS, np.float32)])
    return (np.concatenate([low, np.zeros_like(extra_high)]).astype(np.float32),
            np.concatenate([high, extra_high]).astype(np.float32))


def privileged_features(game: Game, seat: int, max_players: int) -> np.ndarray:
    """The hidden part for ``seat``: other seats' hands by offset, then the next draw-pile cards."""
    out = np.zeros(privileged_size(max_players), np.float32)
    state = game.state
    n = state.rules.num_players
    hands = state.hands
    for offset in range(1, n):
        start = (offset - 1) * NUM_KINDS
        for k in hands[(seat + offset) % n]:
            out[start + k] += 1
    base = (max_players - 1) * NUM_KINDS
    pile = state.draw_pile  # the top of the pile is the end of the list
    for i in range(min(NEXT_DRAWS, len(pile))):
        out[base + i * NUM_KINDS + pile[-1 - i]] = 1
    return out
