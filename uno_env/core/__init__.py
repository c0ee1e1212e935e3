"""The UNO rules engine: pure Python, no RL framework (numpy at most).

>>> from uno_env.core import Game, Rules
>>> game = Game(Rules(edition="monster_high", num_players=4), seed=7)
>>> game.step(game.legal_actions()[0])
"""

from .actions import ACTION_LAYOUT_VERSION, NUM_ACTIONS, Action, action_texts
from .cards import EDITIONS, Edition, stacked_deck
from .errors import (
    ActionTextError,
    CardCodeError,
    DeckError,
    GameFlowError,
    IllegalActionError,
    RulesError,
    StateError,
    UnoError,
)
from .game import Game, Phase
from .rules import Rules

__all__ = [
    "ACTION_LAYOUT_VERSION", "NUM_ACTIONS", "Action", "ActionTextError", "CardCodeError",
    "DeckError", "EDITIONS", "Edition", "Game", "GameFlowError", "IllegalActionError", "Phase",
    "Rules", "RulesError", "StateError", "UnoError", "action_texts", "stacked_deck",
]
