"""The UNO rules engine: pure Python, no RL framework (numpy at most).

>>> from uno_env.core import Game, Rules
>>> game = Game(Rules(edition="monster_high", num_players=4), seed=7)
>>> game.step(game.legal_actions()[0])
>>> game.state.public.phase is game.phase
True

Modules, each importing only the ones above it: ``errors``; ``cards`` (editions as data,
``MAX_PLAYERS``); ``actions`` (the fixed action layout); ``rules`` (``Rules``); ``events`` (the
event log); ``state`` (``GameState``, ``Phase``); ``checks`` (``check_state``, the invariants);
``saves`` (``to_dict`` / ``from_dict``); ``view`` (``SeatView``, ``View``); ``determinize``
(``InfoSet``, the one determinizer); ``game`` (``Game``, the rules applied to a state);
``infoset`` (``InfoSet.sample`` and ``sample_game``, returning ``Game`` objects).
"""

from .actions import ACTION_LAYOUT_VERSION, NUM_ACTIONS, Action, action_texts
from .cards import EDITIONS, MAX_PLAYERS, MIN_PLAYERS, Edition, SpecialWild, stacked_deck
from .checks import check_state
from .errors import (
    ActionTextError,
    CardCodeError,
    DeckError,
    GameFlowError,
    IllegalActionError,
    RulesError,
    SeatError,
    StateError,
    UnknownOptionError,
    UnoError,
)
from .game import DEFAULT_LOG_LIMIT, Game
from .rules import EditionName, Rules, edition_name
from .state import GameState, Phase, PublicState
from .view import SeatView, View

__all__ = [
    "ACTION_LAYOUT_VERSION", "DEFAULT_LOG_LIMIT", "MAX_PLAYERS", "MIN_PLAYERS", "NUM_ACTIONS", "Action",
    "ActionTextError", "CardCodeError", "DeckError", "EDITIONS", "Edition", "EditionName", "Game", "GameFlowError",
    "GameState", "IllegalActionError", "Phase", "PublicState", "Rules", "RulesError", "SeatError", "SeatView", "SpecialWild",
    "StateError", "UnknownOptionError", "UnoError", "View", "action_texts", "check_state", "edition_name", "stacked_deck",
]
